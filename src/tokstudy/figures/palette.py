"""One colour per tokenizer, the same in every plot and on the study page.

A registered tokenizer has its own colour in its registry entry
(:data:`tokstudy.tokenizers.registry.ADAPTERS`), so its colour does not depend on which
other tokenizers a study or a plot has; any other name (a pretrained tokenizer) takes one
of :data:`SPARE_COLOURS` by a checksum of its name.
"""

from __future__ import annotations

import zlib

from tokstudy.tokenizers.registry import ADAPTERS

#: colours no registered tokenizer has (tab20c/Dark2 darks), for pretrained tokenizers
SPARE_COLOURS: tuple[str, ...] = (
    "#756bb1", "#636363", "#1b9e77", "#d95f02", "#7570b3", "#e7298a",
)  # fmt: skip


def tokenizer_colour(name: str) -> str:
    """The hex colour of a tokenizer, by name (``"sp_bpe"``, ``"gpt_4o"``)."""
    if name in ADAPTERS:
        return ADAPTERS[name].colour
    return SPARE_COLOURS[zlib.crc32(name.encode("utf-8")) % len(SPARE_COLOURS)]
