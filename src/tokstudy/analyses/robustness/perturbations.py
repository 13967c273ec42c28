"""Seeded perturbations of real-world text, word by word (the robustness analysis).

A sentence is split on ASCII spaces into words; a perturbation returns the perturbed words
and the separator that joins them, so word ``i`` of the perturbed sentence is the
perturbed word ``i`` of the clean one. ``rate`` is the share of the words with a letter
that a word-sampling perturbation edits (at least one per sentence); the others change
every word they apply to. Each sentence is perturbed with ``numpy.random.default_rng([seed,
sentence index, perturbation index])``.

* ``typo_swap``, ``typo_drop``, ``typo_insert``: one transposition of two adjacent
  different characters, deletion of a character, or insertion of a letter (drawn from the
  letters of the text) in ``rate`` of the words: the edits of the models' misspelling noise
  (:class:`tokstudy.models.noise.Misspeller`, :func:`tokstudy.models.noise.corrupt_words`).
* ``strip_diacritics``: NFD, combining marks (category ``Mn``) removed, NFC (``é`` → ``e``;
  Devanagari vowel signs are ``Mc``/``Mn``: the ``Mn`` ones go too).
* ``lowercase``, ``uppercase``: ``str.lower`` / ``str.upper`` of every word.
* ``homoglyphs``: in ``rate`` of the words, every Latin letter with a Cyrillic or Greek
  look-alike of Unicode's ``confusables.txt`` (:data:`HOMOGLYPHS`) is replaced by it.
* ``fullwidth``: every ASCII character ``!``-``~`` → its fullwidth form (U+FF01-U+FF5E).
* ``math_bold``: every ASCII letter and digit → MATHEMATICAL BOLD (U+1D400 …, U+1D7CE …).
* ``nbsp``: the spaces between words become NO-BREAK SPACE (U+00A0).
* ``zero_width``: a ZERO WIDTH SPACE (U+200B) inside ``rate`` of the words of two or more
  characters, at a drawn position.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.models.noise import Misspeller, corrupt_words

#: Latin letter → a look-alike of another script (Unicode confusables.txt)
HOMOGLYPHS = {
    "a": "\u0430", "c": "\u0441", "e": "\u0435", "i": "\u0456", "j": "\u0458",
    "o": "\u043e", "p": "\u0440", "s": "\u0455", "x": "\u0445", "y": "\u0443",
    "A": "\u0391", "B": "\u0392", "C": "\u0421", "E": "\u0395", "H": "\u0397",
    "I": "\u0399", "K": "\u039a", "M": "\u039c", "N": "\u039d", "O": "\u039f",
    "P": "\u03a1", "T": "\u03a4", "X": "\u03a7", "Y": "\u03a5", "Z": "\u0396",
}  # fmt: skip
NBSP, ZWSP = "\u00a0", "\u200b"
FULLWIDTH_OFFSET = 0xFF01 - 0x21

Words = list[str]


@dataclass(frozen=True)
class OneEdit(Misspeller):
    """The models' misspeller restricted to one kind of edit."""

    kind: str = "transposition"

    def applicable(self, word: str) -> list[str]:
        """``[kind]`` where that edit can change ``word``."""
        return [k for k in super().applicable(word) if k == self.kind]


def _styled(char: str, style: str) -> str:
    if "a" <= char.lower() <= "z" and char.isascii():
        case = "CAPITAL" if char.isupper() else "SMALL"
        return unicodedata.lookup(f"MATHEMATICAL {style} {case} {char.upper()}")
    if char.isascii() and char.isdigit():
        return unicodedata.lookup(f"MATHEMATICAL {style} DIGIT {unicodedata.name(char)[6:]}")
    return char


def strip_diacritics(word: str) -> str:
    """NFD, ``Mn`` marks removed, NFC."""
    decomposed = unicodedata.normalize("NFD", word)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    )


def fullwidth(word: str) -> str:
    """ASCII ``!``-``~`` to the fullwidth forms."""
    return "".join(chr(ord(c) + FULLWIDTH_OFFSET) if "!" <= c <= "~" else c for c in word)


def math_bold(word: str) -> str:
    """ASCII letters and digits to MATHEMATICAL BOLD."""
    return "".join(_styled(c, "BOLD") for c in word)


def _sampled(words: Words, rng: np.random.Generator, rate: float, change: Callable) -> Words:
    eligible = [i for i, w in enumerate(words) if change(w) != w]
    if not eligible:
        return list(words)
    count = min(len(eligible), max(1, round(rate * len(eligible))))
    chosen = set(rng.choice(eligible, size=count, replace=False).tolist())
    return [change(w) if i in chosen else w for i, w in enumerate(words)]


class Perturber:
    """The perturbations of one text (letters for insertions from its sentences)."""

    def __init__(self, sentences: Sequence[str], seed: int, rate: float) -> None:
        self.letters = tuple(sorted({c for s in sentences for c in s if c.isalpha()}))
        self.seed, self.rate = seed, rate

    def perturb(self, name: str, index: int, sentence: str) -> tuple[Words, str]:
        """Perturbed words of sentence ``index`` and their separator."""
        words = sentence.split(" ")
        rng = np.random.default_rng([self.seed, index, PERTURBATIONS.index(name)])
        if name.startswith("typo_"):
            kind = {"typo_swap": "transposition", "typo_drop": "deletion"}.get(name, "insertion")
            return corrupt_words(words, OneEdit(self.letters, kind), rng, self.rate)[0], " "
        if name == "nbsp":
            return list(words), NBSP
        if name == "homoglyphs":
            swap = lambda w: "".join(HOMOGLYPHS.get(c, c) for c in w)  # noqa: E731
            return _sampled(words, rng, self.rate, swap), " "
        if name == "zero_width":
            return _sampled(words, rng, self.rate, lambda w: _zwsp(w, rng)), " "
        return [EVERY_WORD[name](w) for w in words], " "


def _zwsp(word: str, rng: np.random.Generator) -> str:
    if len(word) < 2:
        return word
    at = int(rng.integers(1, len(word)))
    return word[:at] + ZWSP + word[at:]


EVERY_WORD: dict[str, Callable[[str], str]] = {
    "strip_diacritics": strip_diacritics,
    "lowercase": str.lower,
    "uppercase": str.upper,
    "fullwidth": fullwidth,
    "math_bold": math_bold,
}
PERTURBATIONS = (
    "typo_swap", "typo_drop", "typo_insert", "strip_diacritics", "lowercase", "uppercase",
    "homoglyphs", "fullwidth", "math_bold", "nbsp", "zero_width",
)  # fmt: skip


def check_names(names: Sequence[str], key: str) -> None:
    """A one-line error naming ``key`` and the valid names for an unknown perturbation."""
    unknown = [n for n in names if n not in PERTURBATIONS]
    if unknown:
        raise TokstudyError(
            f"{key}: no perturbation {', '.join(map(repr, unknown))} "
            f"(valid: {', '.join(PERTURBATIONS)})"
        )
