"""How a tokenizer's segmentation breaks under perturbed text.

For one tokenizer, one text (sentences) and one perturbation
(:mod:`tokstudy.analyses.robustness.perturbations`):

* ``inflation``: tokens of the perturbed sentences over tokens of the clean ones, minus 1
  (each sentence encoded whole);
* ``changed_words``: the share of words whose tokens change: word ``i`` is encoded with
  the separator before it (none for the first word: ``"word"``, ``" word"``, or
  ``"\\u00a0word"`` under ``nbsp``), clean and perturbed, and counts as changed when the
  two id sequences differ;
* ``edited_words``: the share of words whose text the perturbation changed (a word can
  change its tokens only by being edited, except under ``nbsp``, where the separator
  changes).
"""

from __future__ import annotations

from collections.abc import Sequence

from tokstudy.analyses.robustness.perturbations import Perturber
from tokstudy.tokenizers.base import Tokenizer


def _pieces(words: Sequence[str], separator: str) -> list[str]:
    return [word if i == 0 else separator + word for i, word in enumerate(words)]


Perturbed = dict[str, list[tuple[list[str], str]]]


def perturb_all(
    sentences: Sequence[str], names: Sequence[str], seed: int, rate: float
) -> Perturbed:
    """Perturbation name → the perturbed words and separator of every sentence (computed
    once per text, whatever the number of tokenizers)."""
    perturber = Perturber(sentences, seed, rate)
    return {
        name: [perturber.perturb(name, i, s) for i, s in enumerate(sentences)] for name in names
    }


def _ids(tokenizer: Tokenizer, pieces: Sequence[str]) -> dict[str, tuple[int, ...]]:
    unique = sorted(set(pieces))
    return dict(zip(unique, map(tuple, tokenizer.encode_batch(unique)), strict=True))


def robustness_rows(
    tokenizer: Tokenizer, sentences: Sequence[str], perturbed: Perturbed
) -> list[dict[str, object]]:
    """One row per perturbation of ``perturbed`` (see the module docstring). A word piece
    is encoded alone, so a piece the perturbation left unchanged keeps its ids: only the
    distinct changed pieces are encoded."""
    clean_pieces = [p for s in sentences for p in _pieces(s.split(" "), " ")]
    clean_ids = _ids(tokenizer, clean_pieces)
    clean_tokens = sum(map(len, tokenizer.encode_batch(list(sentences))))
    rows = []
    for name, variants in perturbed.items():
        tokens = sum(map(len, tokenizer.encode_batch([sep.join(w) for w, sep in variants])))
        pieces = [p for w, sep in variants for p in _pieces(w, sep)]
        pairs = list(zip(clean_pieces, pieces, strict=True))
        new_ids = _ids(tokenizer, [new for old, new in pairs if new != old])
        changed = sum(new != old and new_ids[new] != clean_ids[old] for old, new in pairs)
        edited = sum(
            a != b
            for (words, _), sentence in zip(variants, sentences, strict=True)
            for a, b in zip(sentence.split(" "), words, strict=True)
        )
        words = len(pieces)
        nan = float("nan")
        rows.append(
            {
                "perturbation": name,
                "sentences": len(sentences),
                "words": words,
                "tokens_clean": clean_tokens,
                "tokens_perturbed": tokens,
                "inflation": tokens / clean_tokens - 1 if clean_tokens else nan,
                "changed_words": changed / words if words else nan,
                "edited_words": edited / words if words else nan,
            }
        )
    return rows
