"""Character-level tokenizer: every character seen in training at least ``min_count`` times.

The pipeline lives in a ``tokenizer.json`` (NFKC → spaces become ``▁`` → one token per
Unicode code point → word-level lookup, ``[UNK]`` for unseen characters → ``▁`` back to
spaces), so ``transformers.PreTrainedTokenizerFast`` loads it unchanged. The vocabulary
size follows from the data; it is not set by config.

Round trip: lossless for NFKC-stable text without the character ``▁`` whose characters were
seen in training.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path
from typing import ClassVar

from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.hf_tokenizers import HFTokenizersAdapter
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, TrainSpec, corpus_lines
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import METASPACE


def character_counts(corpus: Path) -> Counter[str]:
    """Counts of the characters of the NFKC-normalised corpus, spaces written as ``▁``."""
    counts: Counter[str] = Counter()
    for line in corpus_lines(corpus):
        counts.update(unicodedata.normalize("NFKC", line).replace(" ", METASPACE))
    return counts


class CharTokenizer(HFTokenizersAdapter):
    """One token per character; ``params.min_count`` (default 1) drops rare characters."""

    name = "char"
    sized = False
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {"min_count": Param(int, 1, minimum=1)}

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> CharTokenizer:
        min_count = spec.params["min_count"]
        counts = character_counts(corpus)
        kept = sorted(
            (c for c, n in counts.items() if n >= min_count), key=lambda c: (-counts[c], c)
        )
        if not kept:
            raise TokstudyError(f"char ({spec.label}): no character occurs {min_count} times")
        vocab = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *kept])}
        tokenizer = HFTokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Metaspace(
                    replacement=METASPACE, prepend_scheme="never", split=False
                ),
                pre_tokenizers.Split(Regex("."), behavior="isolated"),
            ]
        )
        tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="never")
        return cls(tokenizer)
