"""One heat map of an analysis table: rows × columns of one value, each cell labelled."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from tokstudy.figures.layout import save_figure


def plot_heatmap(
    table: pd.DataFrame,
    rows: str,
    columns: str,
    value: str,
    title: str,
    outputs: Sequence[Path],
    cmap: str = "viridis",
    centre: float | None = None,
) -> None:
    """``value`` of ``table`` with a row per ``rows`` (sorted) and a column per ``columns``
    (table order); an empty cell is a pair the table has no value for. With ``centre``,
    the colour scale is symmetric about it (for a diverging ``cmap``: values below and
    above ``centre`` take the two hues)."""
    matrix = table.pivot_table(index=rows, columns=columns, values=value, aggfunc="mean")
    matrix = matrix.reindex(columns=list(dict.fromkeys(table[columns]))).sort_index()
    values = matrix.to_numpy(dtype=np.float64)
    height, width = matrix.shape
    figure, axis = plt.subplots(figsize=(3 + 0.75 * width, 3.5 + 0.4 * height))
    limits = {}
    if centre is not None:
        reach = float(np.nanmax(np.abs(values - centre), initial=0.0)) or 1.0
        limits = {"vmin": centre - reach, "vmax": centre + reach}
    image = axis.imshow(np.ma.masked_invalid(values), cmap=cmap, aspect="auto", **limits)
    for (row, column), cell in np.ndenumerate(values):
        if np.isfinite(cell):
            shade = float(image.norm(cell))
            dark = abs(shade - 0.5) > 0.3 if centre is not None else shade < 0.5
            colour = "white" if dark else "black"
            axis.text(
                column, row, f"{cell:.2f}", ha="center", va="center", fontsize=7, color=colour
            )
    axis.set_xticks(range(width), [str(c) for c in matrix.columns], rotation=45, ha="right")
    axis.set_yticks(range(height), [str(r) for r in matrix.index])
    figure.colorbar(image, ax=axis, label=value)
    figure.suptitle(title)
    save_figure(figure, outputs)
