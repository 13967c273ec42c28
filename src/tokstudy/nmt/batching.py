"""Model inputs of a translation pair and batches bounded by a token budget.

A source is ``ids + [SEP]``; the decoder reads ``[CLS] + ids`` and predicts ``ids + [SEP]``
(``[CLS]`` is the beginning-of-sentence and ``[SEP]`` the end-of-sentence token). Batches
follow the usual recipe: examples sorted by length (ties in a seeded random order) are cut
into batches whose padded size ``sentences × longest side`` stays within the budget (the
longest side rounded up to the padding multiple, when there is one), and the batches are
shuffled with a seed.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tokstudy.errors import TokstudyError
from tokstudy.nmt.config import round_up
from tokstudy.tokenizers.base import CLS, PAD, SEP, SPECIAL_TOKENS, Tokenizer

log = logging.getLogger(__name__)

#: label value the loss ignores (target padding)
IGNORE_INDEX = -100
#: pairs encoded at a time (:func:`encode_pairs`)
ENCODE_PAIRS = 4096


@dataclass(frozen=True)
class SpecialIds:
    """Control-token ids of a tokenizer: padding, sentence start and end, never-generated."""

    pad: int
    bos: int
    eos: int
    #: control tokens other than the end of sentence: never part of a hypothesis
    suppressed: tuple[int, ...]

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> SpecialIds:
        """The ids of ``[PAD]``, ``[CLS]`` (start) and ``[SEP]`` (end) in ``tokenizer.vocab``."""
        index = {token: i for i, token in enumerate(tokenizer.vocab) if token in SPECIAL_TOKENS}
        missing = [token for token in (PAD, CLS, SEP) if token not in index]
        if missing:
            raise TokstudyError(
                f"tokenizer {tokenizer.name!r}: no {', '.join(missing)} in its vocabulary "
                "(NMT needs [PAD], [CLS] as sentence start and [SEP] as sentence end)"
            )
        suppressed = tuple(sorted(i for i in tokenizer.special_ids if i != index[SEP]))
        return cls(index[PAD], index[CLS], index[SEP], suppressed)


def shared_special_ids(source: Tokenizer, target: Tokenizer) -> SpecialIds:
    """The target's special ids, checked to be the same ids in the source tokenizer."""
    source_ids, target_ids = SpecialIds.of(source), SpecialIds.of(target)
    fields = ("pad", "bos", "eos")
    if any(getattr(source_ids, name) != getattr(target_ids, name) for name in fields):
        raise TokstudyError(
            f"tokenizers {source.name!r} and {target.name!r} give [PAD]/[CLS]/[SEP] different "
            f"ids ({source_ids.pad}/{source_ids.bos}/{source_ids.eos} vs "
            f"{target_ids.pad}/{target_ids.bos}/{target_ids.eos}); the model shares them"
        )
    return target_ids


@dataclass(frozen=True, slots=True)
class Example:
    """One encoded pair: source ids (with end token) and target ids (without specials),
    each a sequence of ints (:func:`encode_pairs` keeps them as 4-byte ``array``s)."""

    index: int
    source: Sequence[int]
    target: Sequence[int]

    @property
    def length(self) -> int:
        """Longer side in model positions (target counts its start/end token)."""
        return max(len(self.source), len(self.target) + 1)


def encode_pairs(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    pairs: Sequence[tuple[str, str]],
    special: SpecialIds,
    max_length: int,
) -> list[Example]:
    """Training examples of ``pairs``; pairs with a side over ``max_length`` are left out.

    Encoded :data:`ENCODE_PAIRS` pairs at a time, each side's ids kept as a 4-byte
    ``array``: a library's per-line encoding objects never pile up for the whole corpus."""
    examples = []
    for start in range(0, len(pairs), ENCODE_PAIRS):
        chunk = pairs[start : start + ENCODE_PAIRS]
        sources = source_tokenizer.encode_batch([source for source, _ in chunk])
        targets = target_tokenizer.encode_batch([target for _, target in chunk])
        examples += [
            Example(start + offset, array("i", [*source, special.eos]), array("i", target))
            for offset, (source, target) in enumerate(zip(sources, targets, strict=True))
        ]
    kept = [example for example in examples if example.length <= max_length]
    if len(kept) < len(examples):
        log.info(
            "left out %d of %d pairs longer than %d tokens",
            len(examples) - len(kept),
            len(examples),
            max_length,
        )
    if not kept:
        raise TokstudyError(f"no training pair fits in max_length={max_length} tokens")
    return kept


def token_batches(
    lengths: Sequence[int], max_tokens: int, seed: int | Sequence[int]
) -> list[list[int]]:
    """Batches of positions into ``lengths`` with ``len(batch) × max length <= max_tokens``.

    Every position is in exactly one batch; equal lengths are ordered at random and the
    batch order is shuffled, both with ``seed``.
    """
    if any(length > max_tokens for length in lengths):
        raise TokstudyError(
            f"an example of {max(lengths)} tokens does not fit in max_tokens={max_tokens}"
        )
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(lengths))
    order = shuffled[np.argsort(np.asarray(lengths, dtype=np.int64)[shuffled], kind="stable")]
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for position in order.tolist():
        longest_with = max(longest, lengths[position])
        if current and (len(current) + 1) * longest_with > max_tokens:
            batches.append(current)
            current, longest_with = [], lengths[position]
        current.append(position)
        longest = longest_with
    if current:
        batches.append(current)
    return [batches[i] for i in rng.permutation(len(batches))]


def pad(
    sequences: Sequence[Sequence[int]], value: int, multiple: int = 1, width: int | None = None
) -> torch.Tensor:
    """A ``(batch, width)`` tensor of ``sequences``, right-padded with ``value``: ``width``
    (when not given) is the longest sequence's length rounded up to a multiple of
    ``multiple``."""
    if width is None:
        width = round_up(max(len(sequence) for sequence in sequences), multiple)
    return torch.tensor([list(seq) + [value] * (width - len(seq)) for seq in sequences])


def collate(
    examples: Sequence[Example], special: SpecialIds, multiple: int = 1, budget: int | None = None
) -> dict[str, torch.Tensor]:
    """Model inputs of a batch: source ids and mask, decoder inputs and labels; each side
    padded to a multiple of ``multiple`` positions (few distinct shapes for compiled
    kernels; the padding is masked and ignored by the loss).

    ``budget``: a fixed shape (for CUDA graphs): both sides one width, the longest side's
    rounded up to ``multiple``, and ``budget // width`` rows, those past the examples
    filled with a source of one end token and no target (no label: no loss)."""
    sources = [example.source for example in examples]
    targets = [[special.bos, *example.target] for example in examples]
    labels = [[*example.target, special.eos] for example in examples]
    width = None
    if budget is not None:
        width = round_up(max(example.length for example in examples), multiple)
        rows = budget // width
        if rows < len(examples):
            raise ValueError(f"{len(examples)} examples do not fit in {rows} rows")
        filler = rows - len(examples)
        sources, targets = sources + [[special.eos]] * filler, targets + [[special.bos]] * filler
        labels += [[]] * filler
    return {
        "input_ids": pad(sources, special.pad, multiple, width),
        "attention_mask": pad([[1] * len(source) for source in sources], 0, multiple, width),
        "decoder_input_ids": pad(targets, special.pad, multiple, width),
        "labels": pad(labels, IGNORE_INDEX, multiple, width),
    }
