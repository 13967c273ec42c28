"""Plots of the UDHR parity: a latitude/longitude "world map" of premiums per tokenizer,
the sorted premium curves, and a script × tokenizer heat map.

They read the table of :func:`tokstudy.analyses.udhr.tables.write_udhr_parity` (columns
``tokenizer``, ``language``, ``iso6393``, ``script``, ``premium``, ``latitude``,
``longitude``). No coastlines are drawn: no installed package ships them for offline use;
the points are the index's representative location of each language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

from tokstudy.analyses.udhr.parity import language_means
from tokstudy.analyses.udhr.tables import read_udhr_table
from tokstudy.figures.layout import panel_grid, save_figure


def _labels(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["tokenizer"]))


def _premium_norm(premiums: pd.Series) -> LogNorm:
    finite = premiums[np.isfinite(premiums) & (premiums > 0)]
    low = min(float(finite.min()) if len(finite) else 1.0, 0.99)
    high = max(float(finite.max()) if len(finite) else 1.0, 1.01)
    return LogNorm(vmin=low, vmax=high)


def plot_premium_map(table: pd.DataFrame, reference: str, outputs: Sequence[Path]) -> None:
    """A panel per tokenizer: each translation at its language's latitude/longitude,
    coloured by premium on a log scale (the same scale in every panel)."""
    labels = _labels(table)
    norm = _premium_norm(table["premium"])
    figure, axes = panel_grid(max(1, len(labels)))
    for axis, label in zip(axes.flat, labels, strict=False):
        rows = table[(table["tokenizer"] == label)].dropna(subset=["latitude", "longitude"])
        rows = rows.sort_values("premium")  # the most expensive drawn last, on top
        image = axis.scatter(
            rows["longitude"], rows["latitude"], c=rows["premium"], cmap="viridis", norm=norm, s=9
        )
        axis.set_xlim(-180, 180)
        axis.set_ylim(-60, 80)
        axis.set_aspect("equal")
        axis.set_xlabel("longitude")
        axis.set_ylabel("latitude")
        axis.set_title(label)
        figure.colorbar(image, ax=axis, label=f"tokens / {reference} tokens", shrink=0.7)
    figure.suptitle(f"Tokenization premium over {reference} on the UDHR, by language location")
    save_figure(figure, outputs)


def plot_premium_curves(table: pd.DataFrame, reference: str, outputs: Sequence[Path]) -> None:
    """Each tokenizer's premiums over ISO 639-3 languages (varieties averaged), sorted from
    cheapest to most expensive, on one log axis; a line at 1."""
    means = language_means(table)
    figure, axis = plt.subplots(figsize=(8, 5))
    for label in _labels(table):
        premiums = np.sort(means.loc[means["tokenizer"] == label, "premium"].to_numpy())
        axis.plot(np.arange(1, len(premiums) + 1), premiums, label=label, linewidth=1.2)
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.set_yscale("log")
    axis.set_xlabel("languages (ISO 639-3), sorted by premium")
    axis.set_ylabel(f"tokens / tokens of {reference}")
    axis.legend(fontsize="small")
    figure.suptitle(f"Sorted tokenization premiums over {reference} (UDHR)")
    save_figure(figure, outputs)


def plot_script_heatmap(scripts: pd.DataFrame, reference: str, outputs: Sequence[Path]) -> None:
    """Scripts × tokenizers, coloured by median premium on a log scale, annotated; the
    scripts table of :func:`tokstudy.analyses.udhr.parity.udhr_scripts`."""
    matrix = scripts.set_index("script").drop(columns=["script_name", "languages"])
    values = matrix.to_numpy(dtype=np.float64)
    rows, columns = values.shape
    norm = _premium_norm(pd.Series(values.ravel()))
    figure, axis = plt.subplots(figsize=(3 + 0.8 * columns, 2 + 0.28 * rows))
    image = axis.imshow(np.ma.masked_invalid(values), cmap="viridis", norm=norm, aspect="auto")
    for (row, column), value in np.ndenumerate(values):
        if np.isfinite(value):
            axis.text(column, row, f"{value:.1f}", ha="center", va="center", fontsize=6, color="w")
    names = [f"{s} ({n})" for s, n in zip(matrix.index, scripts["languages"], strict=True)]
    axis.set_xticks(range(columns), matrix.columns, rotation=45, ha="right")
    axis.set_yticks(range(rows), names, fontsize="small")
    figure.colorbar(image, ax=axis, label=f"median tokens / tokens of {reference}")
    figure.suptitle(f"Median premium per script over {reference} (UDHR; languages per script)")
    save_figure(figure, outputs)


def plot_udhr_premiums(
    table: Path, scripts: Path, reference: str, plots: Mapping[str, Sequence[Path]]
) -> None:
    """The three plots of the premium tables ``table`` and ``scripts`` (CSV; what rule
    ``plot_parity_udhr`` runs); ``plots`` maps ``map``, ``curves`` and ``scripts`` to their
    files."""
    premiums = read_udhr_table(table)
    plot_premium_map(premiums, reference, plots["map"])
    plot_premium_curves(premiums, reference, plots["curves"])
    plot_script_heatmap(read_udhr_table(scripts), reference, plots["scripts"])
