"""The plot of the multilingual tokenizers: vocabulary share per language."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.figures.layout import panel_grid, save_figure


def plot_vocabulary_share(table: Path, outputs: Sequence[Path]) -> None:
    """Multilingual tokenizers, a panel per tokenizer and size, a bar group per language
    (``table``: the vocabulary-share CSV).

    Bars: share of the vocabulary the language's text uses (light) and uses alone (dark);
    a black tick marks the language's share of the mixed training lines.
    """
    table = pd.read_csv(table)
    panels = sorted({(row.tokenizer, int(row.vocab_size)) for row in table.itertuples()})
    figure, axes = panel_grid(max(1, len(panels)))
    for axis, (tokenizer, size) in zip(axes.flat, panels, strict=False):
        rows = table[(table["tokenizer"] == tokenizer) & (table["vocab_size"] == size)]
        rows = rows.sort_values("language")
        x = np.arange(len(rows))
        axis.bar(x, rows["share_used"], color="tab:blue", alpha=0.35, label="used")
        axis.bar(x, rows["share_exclusive"], color="tab:blue", label="used by no other language")
        axis.plot(x, rows["training_share"], "k_", markersize=18, label="share of training lines")
        axis.set_xticks(x, rows["language"])
        axis.set_ylim(0, 1)
        axis.set_ylabel("share of vocabulary")
        axis.set_title(f"{tokenizer}, vocabulary {size}")
    if panels:
        axes.flat[0].legend(fontsize="small")
    figure.suptitle("Multilingual tokenizers: vocabulary share per language")
    save_figure(figure, outputs)
