"""Misspelling noise for robustness tests (the "erroneous text" setting).

``p`` % of the sentences are corrupted (p = 10, 20, 30 by default). Sentences are chosen
by one seeded permutation and each sentence's corruption is seeded by ``(seed, index)``,
so the levels are nested: every sentence noised at 10 % is noised identically at 20 %.

In a corrupted sentence, ``word_fraction`` of the words that contain a letter (at least
one) each get one character edit, chosen uniformly among those that apply:

* ``insertion`` of a letter, ``deletion`` of a character, ``substitution`` of a letter by
  another letter, ``transposition`` of two adjacent different characters;
* ``matra``: a combining sign (Unicode category Mn/Mc) of the Devanagari or Bengali block,
  such as a vowel sign, replaced by another sign of the same block.

Replacement letters come from the letters of the sentences being noised (sorted).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

EDIT_KINDS = ("insertion", "deletion", "substitution", "transposition", "matra")
#: Unicode blocks whose combining signs can be swapped (Devanagari, Bengali)
INDIC_BLOCKS = ((0x0900, 0x097F), (0x0980, 0x09FF))
EDIT_COLUMNS = ("sentence", "word", "original", "noisy", "kind")


def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")


def _indic_block(char: str) -> tuple[int, int] | None:
    code = ord(char)
    return next((b for b in INDIC_BLOCKS if b[0] <= code <= b[1]), None)


def is_matra(char: str) -> bool:
    """Whether ``char`` is a combining sign (Mn/Mc) of the Devanagari or Bengali block."""
    return _indic_block(char) is not None and unicodedata.category(char) in ("Mn", "Mc")


def _signs_of_block(block: tuple[int, int]) -> list[str]:
    return [chr(c) for c in range(block[0], block[1] + 1) if is_matra(chr(c))]


@dataclass(frozen=True)
class Misspeller:
    """Applies one random character edit to a word."""

    letters: tuple[str, ...]

    def applicable(self, word: str) -> list[str]:
        """Edit kinds that can change ``word``."""
        kinds = ["insertion"] if self.letters else []
        if len(word) >= 2:
            kinds.append("deletion")
        if any(_is_letter(c) for c in word) and len(self.letters) >= 2:
            kinds.append("substitution")
        if any(a != b for a, b in pairwise(word)):
            kinds.append("transposition")
        if any(is_matra(c) for c in word):
            kinds.append("matra")
        return kinds

    def misspell(self, word: str, rng: np.random.Generator) -> tuple[str, str]:
        """The edited word and the kind of edit (word unchanged and ``""`` if none applies)."""
        kinds = self.applicable(word)
        if not kinds:
            return word, ""
        kind = kinds[rng.integers(len(kinds))]
        return getattr(self, f"_{kind}")(word, rng), kind

    def _insertion(self, word: str, rng: np.random.Generator) -> str:
        at = rng.integers(len(word) + 1)
        return word[:at] + self.letters[rng.integers(len(self.letters))] + word[at:]

    def _deletion(self, word: str, rng: np.random.Generator) -> str:
        at = rng.integers(len(word))
        return word[:at] + word[at + 1 :]

    def _substitution(self, word: str, rng: np.random.Generator) -> str:
        at = _pick(rng, [i for i, c in enumerate(word) if _is_letter(c)])
        choices = [c for c in self.letters if c != word[at]]
        return word[:at] + choices[rng.integers(len(choices))] + word[at + 1 :]

    def _transposition(self, word: str, rng: np.random.Generator) -> str:
        at = _pick(rng, [i for i in range(len(word) - 1) if word[i] != word[i + 1]])
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]

    def _matra(self, word: str, rng: np.random.Generator) -> str:
        at = _pick(rng, [i for i, c in enumerate(word) if is_matra(c)])
        block = _indic_block(word[at])
        choices = [c for c in _signs_of_block(block) if c != word[at]]
        return word[:at] + choices[rng.integers(len(choices))] + word[at + 1 :]


def _pick(rng: np.random.Generator, options: list[int]) -> int:
    return options[rng.integers(len(options))]


def corrupt_words(
    words: Sequence[str],
    misspeller: Misspeller,
    rng: np.random.Generator,
    word_fraction: float,
) -> tuple[list[str], list[tuple[int, str, str, str]]]:
    """Misspell ``word_fraction`` (at least one) of the words that contain a letter.

    Returns the new words and ``(word index, original, noisy, kind)`` per edit.
    """
    eligible = [i for i, w in enumerate(words) if any(_is_letter(c) for c in w)]
    if not eligible:
        return list(words), []
    count = max(1, round(word_fraction * len(eligible)))
    chosen = sorted(rng.choice(eligible, size=min(count, len(eligible)), replace=False))
    noisy = list(words)
    edits = []
    for i in chosen:
        noisy[i], kind = misspeller.misspell(words[i], rng)
        edits.append((int(i), words[i], noisy[i], kind))
    return noisy, edits


def noise_word_lists(
    sentences: Sequence[Sequence[str]],
    levels: Sequence[int] = (10, 20, 30),
    *,
    seed: int = 0,
    word_fraction: float = 0.2,
) -> tuple[dict[int, list[list[str]]], pd.DataFrame]:
    """Noised copies of word-split sentences at each level (percent of sentences).

    Returns ``{level: sentences}`` (same length and word counts as the input) and a
    table of the edits of the highest level (``sentence, word, original, noisy, kind``).
    """
    for level in levels:
        if not 0 <= level <= 100:
            raise ValueError(f"noise level {level} is not a percentage")
    letters = tuple(sorted({c for s in sentences for w in s for c in w if _is_letter(c)}))
    misspeller = Misspeller(letters)
    order = np.random.default_rng(seed).permutation(len(sentences))
    top = max(levels, default=0)
    corrupted: dict[int, list[str]] = {}
    rows = []
    for index in order[: round(len(sentences) * top / 100)]:
        rng = np.random.default_rng([seed, int(index)])
        corrupted[int(index)], edits = corrupt_words(
            sentences[index], misspeller, rng, word_fraction
        )
        rows.extend((int(index), *edit) for edit in edits)
    noised = {}
    for level in levels:
        chosen = {int(i) for i in order[: round(len(sentences) * level / 100)]}
        noised[level] = [corrupted[i] if i in chosen else list(s) for i, s in enumerate(sentences)]
    edits = pd.DataFrame(sorted(rows), columns=list(EDIT_COLUMNS))
    return noised, edits


def noise_lines(
    lines: Sequence[str],
    levels: Sequence[int] = (10, 20, 30),
    *,
    seed: int = 0,
    word_fraction: float = 0.2,
) -> tuple[dict[int, list[str]], pd.DataFrame]:
    """:func:`noise_word_lists` for text lines; whitespace between words is kept."""
    pieces = [re.split(r"(\s+)", line) for line in lines]
    words = [p[0::2] for p in pieces]
    noised, edits = noise_word_lists(words, levels, seed=seed, word_fraction=word_fraction)
    out = {}
    for level, sentences in noised.items():
        rebuilt = []
        for spaced, new_words in zip(pieces, sentences, strict=True):
            merged = list(spaced)
            merged[0::2] = new_words
            rebuilt.append("".join(merged))
        out[level] = rebuilt
    return out, edits


def relative_changes(results: Mapping[int, Mapping[str, float]]) -> pd.DataFrame:
    """Tidy ``level, metric, value, relative_change`` rows; level 0 is the clean baseline.

    ``relative_change`` = (value − clean) / |clean|.
    """
    clean = results[0]
    rows = []
    for level in sorted(results):
        for metric in sorted(clean):
            value, base = results[level][metric], clean[metric]
            change = (value - base) / abs(base) if base else float("nan")
            rows.append((level, metric, value, change))
    return pd.DataFrame(rows, columns=["level", "metric", "value", "relative_change"])
