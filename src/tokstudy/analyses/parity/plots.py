"""Plots of the multi-parallel parity analysis: premiums as a heat map and as bar charts.

Both read the table of :func:`tokstudy.analyses.parity.parity.parallel_parity` (columns
``tokenizer``, ``language``, ``premium``); labels are language codes and tokenizer names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from tokstudy.figures.layout import panel_grid, save_figure


def premium_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """Premiums with a row per language (sorted) and a column per tokenizer (table order)."""
    matrix = table.pivot(index="language", columns="tokenizer", values="premium")
    return matrix.reindex(columns=list(dict.fromkeys(table["tokenizer"]))).sort_index()


def plot_premium_heatmap(table: pd.DataFrame, reference: str, outputs: Sequence[Path]) -> None:
    """Languages × tokenizers, coloured by premium (white at 1, red above, blue below);
    an empty cell is a language the tokenizer does not cover."""
    matrix = premium_matrix(table)
    values = matrix.to_numpy(dtype=np.float64)
    finite = values[np.isfinite(values)]
    low = min(float(finite.min()) if finite.size else 1.0, 0.99)
    high = max(float(finite.max()) if finite.size else 1.0, 1.01)
    rows, columns = matrix.shape
    figure, axis = plt.subplots(figsize=(3 + 0.75 * columns, 3.5 + 0.4 * rows))
    norm = TwoSlopeNorm(vcenter=1.0, vmin=low, vmax=high)
    image = axis.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", norm=norm, aspect="auto")
    for (row, column), value in np.ndenumerate(values):
        if np.isfinite(value):
            colour = "white" if abs(float(norm(value)) - 0.5) > 0.35 else "black"
            axis.text(
                column, row, f"{value:.2f}", ha="center", va="center", fontsize=7, color=colour
            )
    axis.set_xticks(range(columns), matrix.columns, rotation=45, ha="right")
    axis.set_yticks(range(rows), matrix.index)
    figure.colorbar(image, ax=axis, label=f"tokens / tokens of {reference}")
    figure.suptitle(f"Tokenization premium over {reference}")
    save_figure(figure, outputs)


def plot_premium_bars(table: pd.DataFrame, reference: str, outputs: Sequence[Path]) -> None:
    """A panel per tokenizer: its languages' premiums, highest first, a line at 1 (red:
    more tokens than the reference, blue: fewer, grey: the reference)."""
    labels = list(dict.fromkeys(table["tokenizer"]))
    figure, axes = panel_grid(max(1, len(labels)))
    for axis, label in zip(axes.flat, labels, strict=False):
        rows = table[table["tokenizer"] == label].sort_values(
            ["premium", "language"], ascending=[False, True]
        )
        colours = [
            "grey" if lang == reference else "tab:red" if premium > 1 else "tab:blue"
            for lang, premium in zip(rows["language"], rows["premium"], strict=True)
        ]
        axis.bar(range(len(rows)), rows["premium"], color=colours)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_xticks(range(len(rows)), rows["language"], rotation=90, fontsize="small")
        axis.set_ylabel(f"tokens / tokens of {reference}")
        axis.set_title(label)
    figure.suptitle(f"Tokenization premium over {reference}, per tokenizer")
    save_figure(figure, outputs)


def plot_premiums(
    table: Path, reference: str, heatmap: Sequence[Path], bars: Sequence[Path]
) -> None:
    """Both plots of the premiums table ``table`` (CSV; what rule ``plot_parity_pud`` runs)."""
    table = pd.read_csv(table)
    plot_premium_heatmap(table, reference, heatmap)
    plot_premium_bars(table, reference, bars)
