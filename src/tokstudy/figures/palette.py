"""One colour per tokenizer, the same in every plot and on the study page.

A registered adapter takes the colour of its place in the registry (``ADAPTERS``), so its
colour does not depend on which other tokenizers a study or a plot has; any other name (a
pretrained tokenizer) takes one of the remaining colours by a checksum of its name.
"""

from __future__ import annotations

import zlib

from tokstudy.tokenizers.registry import ADAPTERS

#: matplotlib's tab10, then twelve more distinct colours (tab20b/tab20c darks, Dark2)
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
    "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
    "#756bb1", "#636363", "#1b9e77", "#d95f02", "#7570b3", "#e7298a",
)  # fmt: skip


def tokenizer_colour(name: str) -> str:
    """The hex colour of a tokenizer, by name (``"sp_bpe"``, ``"gpt_4o"``)."""
    adapters = list(ADAPTERS)
    if name in ADAPTERS:
        return PALETTE[adapters.index(name) % len(PALETTE)]
    spare = PALETTE[len(adapters) :] or PALETTE
    return spare[zlib.crc32(name.encode("utf-8")) % len(spare)]
