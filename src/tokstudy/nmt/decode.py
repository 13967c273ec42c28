"""Translation with beam search (``transformers`` ``generate``) and detokenization.

Sources are translated in batches of similar length; a batch may produce at most
``max_length_a × longest source + max_length_b`` tokens. Hypotheses come back as target
ids without the start and end tokens, in the order of the sources; text for scoring is
``tokenizer.decode`` of those ids, never the token strings.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch
from transformers import PreTrainedModel

from tokstudy.nmt.batching import SpecialIds, pad
from tokstudy.nmt.config import DecodeConfig
from tokstudy.nmt.model import MAX_POSITIONS
from tokstudy.runtime.progress import progress
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.training.device import autocast

log = logging.getLogger(__name__)


def encode_sources(
    tokenizer: Tokenizer, lines: Sequence[str], special: SpecialIds, max_length: int = MAX_POSITIONS
) -> list[list[int]]:
    """Source ids of each line ended by ``[SEP]``; longer ones are cut to ``max_length``."""
    encoded = tokenizer.encode_batch(list(lines))
    cut = sum(len(ids) + 1 > max_length for ids in encoded)
    if cut:
        log.warning("%d of %d sources cut to %d tokens", cut, len(lines), max_length)
    return [[*ids[: max_length - 1], special.eos] for ids in encoded]


def hypothesis_ids(row: Sequence[int], special: SpecialIds) -> list[int]:
    """The generated ids of one output row: start token dropped, cut at the end token."""
    ids = list(row)
    if ids and ids[0] == special.bos:
        ids = ids[1:]
    if special.eos in ids:
        ids = ids[: ids.index(special.eos)]
    return [token for token in ids if token != special.pad]


def translate(
    model: PreTrainedModel,
    sources: Sequence[Sequence[int]],
    special: SpecialIds,
    config: DecodeConfig,
    device: torch.device,
) -> list[list[int]]:
    """Target ids of each source (from :func:`encode_sources`); ``beam_size`` 1 is greedy."""
    order = sorted(range(len(sources)), key=lambda i: (len(sources[i]), i))
    hypotheses: list[list[int]] = [[] for _ in sources]
    beam = {"num_beams": config.beam_size, "do_sample": False}
    if config.beam_size > 1:
        beam |= {"length_penalty": config.length_penalty, "early_stopping": True}
    model.eval()
    bar = progress(len(sources), "translating", log, unit="sentence")
    with bar, torch.inference_mode(), autocast(device, config.bf16):
        for start in range(0, len(order), config.batch_size):
            positions = order[start : start + config.batch_size]
            batch = [sources[i] for i in positions]
            longest = max(len(source) for source in batch)
            output = model.generate(
                input_ids=pad(batch, special.pad).to(device),
                attention_mask=pad([[1] * len(source) for source in batch], 0).to(device),
                max_new_tokens=min(
                    int(config.max_length_a * longest) + config.max_length_b, MAX_POSITIONS - 1
                ),
                suppress_tokens=list(special.suppressed),
                decoder_start_token_id=special.bos,
                eos_token_id=special.eos,
                pad_token_id=special.pad,
                **beam,
            )
            for position, row in zip(positions, output.tolist(), strict=True):
                hypotheses[position] = hypothesis_ids(row, special)
            bar.update(len(positions))
    return hypotheses
