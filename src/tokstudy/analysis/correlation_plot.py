"""Scatter-plot grid of the correlation analysis: intrinsic metric × downstream score.

One panel per pair (rows: intrinsic metrics on one split; columns: downstream scores); one
point per cell (mean over seeds), colour = tokenizer, marker = vocabulary size; the panel
title gives Spearman's ρ per scope (language or direction).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from tokstudy.report.palette import tokenizer_colour

MARKERS = "osD^vP*Xhp<>"
PANEL_INCHES = 2.4


def _size_order(size: str) -> tuple[bool, int]:
    return (not size.isdigit(), int(size) if size.isdigit() else 0)


def plot_correlation_grid(
    joined: pd.DataFrame, table: pd.DataFrame, split: str, outputs: Sequence[Path]
) -> None:
    """Draw the grid of ``joined`` cells on one intrinsic ``split`` into ``outputs``."""
    cells = joined[joined["split"] == split]
    intrinsic = sorted(cells["intrinsic"].unique()) or ["(none)"]
    downstream = sorted(cells["downstream"].unique()) or ["(none)"]
    tokenizers = sorted(cells["tokenizer"].unique())
    sizes = sorted(cells["vocab_size"].unique(), key=_size_order)
    colours = {t: tokenizer_colour(t) for t in tokenizers}
    markers = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(sizes)}
    rho = table[(table["split"] == split) & ~table["pooled"]].set_index(
        ["intrinsic", "downstream", "scope"]
    )["spearman"]
    figure, axes = plt.subplots(
        len(intrinsic),
        len(downstream),
        figsize=(PANEL_INCHES * len(downstream), PANEL_INCHES * len(intrinsic) + 0.8),
        squeeze=False,
    )
    for row, metric in enumerate(intrinsic):
        for column, score in enumerate(downstream):
            axis = axes[row, column]
            panel = cells[(cells["intrinsic"] == metric) & (cells["downstream"] == score)]
            for (tokenizer, size), points in panel.groupby(["tokenizer", "vocab_size"]):
                axis.scatter(
                    points["intrinsic_value"],
                    points["value"],
                    color=colours[tokenizer],
                    marker=markers[size],
                    s=18,
                )
            titles = [
                f"{scope} ρ={rho.get((metric, score, scope), np.nan):.2f}"
                for scope in sorted(panel["scope"].unique())
            ]
            axis.set_title("\n".join(titles), fontsize=7)
            axis.tick_params(labelsize=6)
            axis.set_xlabel(f"{metric} ({split})", fontsize=7)
            axis.set_ylabel(score, fontsize=7)
    handles = [Line2D([], [], color=colours[t], marker="o", ls="", label=t) for t in tokenizers]
    handles += [
        Line2D([], [], color="grey", marker=markers[s], ls="", label=f"size {s}") for s in sizes
    ]
    figure.legend(handles=handles, loc="lower center", ncol=max(1, len(handles)), fontsize=7)
    figure.suptitle(f"Intrinsic metrics ({split} split) against downstream scores (seed means)")
    figure.tight_layout(rect=(0, 0.04, 1, 0.97))
    for output in outputs:
        figure.savefig(output, dpi=90)
    plt.close(figure)
