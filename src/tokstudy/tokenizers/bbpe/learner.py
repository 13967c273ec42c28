"""Learning BBPE merges with the BPE trainer of HF ``tokenizers``.

The trainer sees each unit (:mod:`tokstudy.tokenizers.bbpe.units`) as one word of byte
symbols, so merges never cross a unit boundary. With word boundaries the trainer's
``continuing_subword_prefix`` ``##`` marks every symbol after a unit's first byte:
leading and trailing forms are distinct tokens and are merged separately.

All byte tokens are seeded into the trainer's vocabulary before training (passed as
its "special tokens", which only fixes their ids): the 5 special tokens get ids 0–4,
the 256 leading bytes ids 5–260 in byte order and, with word boundaries, the 256
trailing bytes ids 261–516. Merged tokens follow in the order they are learned. The
seeding makes the ids, and so the tie-break below, independent of hash order.

Tie-break (the HF trainer's rule): at each step the adjacent pair with the highest
count (summed over all units, overlapping occurrences such as the two pairs in
``A A A`` counted separately) is merged; among pairs of equal count the one whose
``(left id, right id)`` is smallest wins. So the earlier-created token wins, and bytes
win over merged tokens, e.g. on the corpus ``ABABABCABC`` without word boundaries the
merges are ``AB``, then ``(AB)C`` (count 2, ties with ``(AB)(AB)`` and wins because
``C`` has a smaller id than ``AB``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, pre_tokenizers, trainers

from tokstudy.tokenizers.base import SPECIAL_TOKENS
from tokstudy.tokenizers.bbpe.units import TRAILING_PREFIX, byte_tokens, split_units, to_symbols

log = logging.getLogger(__name__)


def seed_tokens(word_boundary: bool) -> list[str]:
    """Special tokens and byte tokens (BPE-symbol form) in id order."""
    trailing = byte_tokens(trailing=True) if word_boundary else []
    return [*SPECIAL_TOKENS, *byte_tokens(trailing=False), *trailing]


def symbol_lines(lines: Iterable[str], word_boundary: bool) -> Iterable[str]:
    """Each line's units as BPE-symbol words separated by spaces (the trainer's input)."""
    for line in lines:
        yield " ".join(to_symbols(unit) for unit in split_units(line, word_boundary))


def learn_bpe(
    lines: Iterable[str], vocab_size: int, word_boundary: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    """Vocabulary (id order) and merges (rank order), both in BPE-symbol form.

    ``vocab_size`` counts the seeded tokens; the result is smaller when the corpus runs
    out of pairs to merge.
    """
    seeds = seed_tokens(word_boundary)
    tokenizer = HFTokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    prefix = {"continuing_subword_prefix": TRAILING_PREFIX} if word_boundary else {}
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=0, show_progress=False, special_tokens=seeds, **prefix
    )
    tokenizer.train_from_iterator(symbol_lines(lines, word_boundary), trainer)
    model = json.loads(tokenizer.to_str())["model"]
    vocab = sorted(model["vocab"], key=model["vocab"].__getitem__)
    if vocab[: len(seeds)] != seeds or [model["vocab"][t] for t in vocab] != list(
        range(len(vocab))
    ):
        raise RuntimeError("HF BpeTrainer did not keep the seeded byte-token ids")
    merges = [(left, right) for left, right in model["merges"]]
    log.info("learned %d merges, vocabulary of %d", len(merges), len(vocab))
    return vocab, merges
