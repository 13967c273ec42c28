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


def robustness_rows(
    tokenizer: Tokenizer, sentences: Sequence[str], names: Sequence[str], seed: int, rate: float
) -> list[dict[str, object]]:
    """One row per perturbation of ``names`` (see the module docstring)."""
    perturber = Perturber(sentences, seed, rate)
    clean_words = [s.split(" ") for s in sentences]
    clean_tokens = sum(map(len, tokenizer.encode_batch(list(sentences))))
    clean_pieces = tokenizer.encode_batch([p for w in clean_words for p in _pieces(w, " ")])
    flat_clean = [w for words in clean_words for w in words]
    rows = []
    for name in names:
        perturbed = [perturber.perturb(name, i, s) for i, s in enumerate(sentences)]
        tokens = sum(map(len, tokenizer.encode_batch([sep.join(w) for w, sep in perturbed])))
        pieces = tokenizer.encode_batch([p for w, sep in perturbed for p in _pieces(w, sep)])
        flat = [w for words, _ in perturbed for w in words]
        words = len(flat)
        rows.append(
            {
                "perturbation": name,
                "sentences": len(sentences),
                "words": words,
                "tokens_clean": clean_tokens,
                "tokens_perturbed": tokens,
                "inflation": tokens / clean_tokens - 1 if clean_tokens else float("nan"),
                "changed_words": sum(a != b for a, b in zip(clean_pieces, pieces, strict=True))
                / words
                if words
                else float("nan"),
                "edited_words": sum(a != b for a, b in zip(flat_clean, flat, strict=True)) / words
                if words
                else float("nan"),
            }
        )
    return rows
