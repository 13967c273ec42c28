"""Scatter-plot grid of the correlation analysis: intrinsic metric × downstream score.

One panel per pair (rows: intrinsic metrics on one split; columns: scores); one point per
cell (mean over seeds), colour = tokenizer, marker = vocabulary size; the panel title gives
ρ and ρ within size (the statistic tested) per scope (language or direction).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from tokstudy.analyses.correlation.cells import CELL_KEYS, intrinsic_columns
from tokstudy.analyses.correlation.table import POOLED
from tokstudy.figures.palette import tokenizer_colour

MARKERS = "osD^vP*Xhp<>"
PANEL_INCHES = 2.4


def plot_correlation_grid(
    cells: pd.DataFrame,
    scores: Sequence[str],
    table: pd.DataFrame,
    split: str,
    outputs: Sequence[Path],
) -> None:
    """Draw the grid of the intrinsic columns ending in ``_{split}`` into ``outputs``."""
    intrinsic = sorted(c for c in intrinsic_columns(cells, scores) if c.endswith(f"_{split}")) or [
        "(none)"
    ]
    columns = sorted(scores) or ["(none)"]
    tokenizers = sorted(cells["tokenizer"].unique())
    sizes = sorted(cells["vocab_size"].unique())
    colours = {t: tokenizer_colour(t) for t in tokenizers}
    markers = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(sizes)}
    shown = table[table["scope"] != POOLED].set_index(["intrinsic", "score", "scope"])
    figure, axes = plt.subplots(
        len(intrinsic),
        len(columns),
        figsize=(PANEL_INCHES * len(columns), PANEL_INCHES * len(intrinsic) + 0.8),
        squeeze=False,
    )
    for row, metric in enumerate(intrinsic):
        for column, score in enumerate(columns):
            axis = axes[row, column]
            if metric not in cells or score not in cells:
                axis.set_axis_off()
                continue
            means = (
                cells.dropna(subset=[score, metric])
                .groupby(CELL_KEYS, sort=True)[[metric, score]]
                .mean()
                .reset_index()
            )
            for (tokenizer, size), points in means.groupby(["tokenizer", "vocab_size"]):
                axis.scatter(
                    points[metric], points[score], color=colours[tokenizer], marker=markers[size]
                )
            titles = []
            for scope in sorted(means["language"].unique()):
                key = (metric, score, scope)
                if key in shown.index:
                    rho, partial = shown.loc[key, ["spearman", "partial_spearman"]]
                    titles.append(f"{scope} ρ={rho:.2f} within size={partial:.2f}")
            axis.set_title("\n".join(titles), fontsize=7)
            axis.tick_params(labelsize=6)
            axis.set_xlabel(metric, fontsize=7)
            axis.set_ylabel(score, fontsize=7)
    handles = [Line2D([], [], color=colours[t], marker="o", ls="", label=t) for t in tokenizers]
    handles += [
        Line2D([], [], color="grey", marker=markers[s], ls="", label=f"size {s:g}") for s in sizes
    ]
    figure.legend(handles=handles, loc="lower center", ncol=max(1, len(handles)), fontsize=7)
    figure.suptitle(f"Intrinsic metrics ({split} split) against downstream scores (seed means)")
    figure.tight_layout(rect=(0, 0.04, 1, 0.97))
    for output in outputs:
        figure.savefig(output, dpi=90)
    plt.close(figure)
