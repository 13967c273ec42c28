"""Plots: each metric against vocabulary size, and token-frequency distributions.

Plots carry only Latin text (language codes, tokenizer names), so they render with the
default font whatever the scripts of the corpora.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import pandas as pd

from tokstudy.figures.layout import PANEL_COLUMNS, panel_grid, save_figure
from tokstudy.figures.palette import tokenizer_colour
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, is_data_sized


def _plot_trained(axis: plt.Axes, rows: pd.DataFrame, metric: str) -> None:
    """Trained tokenizers of one language: a line per tokenizer on a log size axis."""
    for tokenizer, group in sorted(rows.groupby("tokenizer"), key=lambda item: item[0]):
        group = group.sort_values("vocab_size")
        style = "o" if is_data_sized(tokenizer) else "o-"
        axis.plot(
            group["vocab_size"],
            group["value"],
            style,
            label=tokenizer,
            markersize=3,
            color=tokenizer_colour(tokenizer),
        )
    axis.set_xscale("log")
    sizes = sorted(rows["vocab_size"].unique())
    axis.set_xticks(sizes, [str(int(size)) for size in sizes], fontsize="small", rotation=45)
    axis.minorticks_off()
    axis.set_xlabel("vocabulary size")
    axis.set_ylabel(metric)


def _plot_pretrained(axis: plt.Axes, rows: pd.DataFrame) -> None:
    """Pretrained tokenizers of one language: a labelled marker each (name, own size), in a
    panel of their own so that 100k–260k sizes do not squash the trained sizes' axis."""
    rows = rows.sort_values(["vocab_size", "tokenizer"])
    x = np.arange(len(rows))
    axis.scatter(
        x, rows["value"], marker="D", s=16, c=[tokenizer_colour(t) for t in rows["tokenizer"]]
    )
    labels = [f"{r.tokenizer}\n{int(r.vocab_size) // 1000}k" for r in rows.itertuples()]
    axis.set_xticks(x, labels, fontsize="x-small", rotation=60)
    axis.set_xlim(-0.6, max(len(rows), 1) - 0.4)
    axis.tick_params(axis="y", labelleft=False)
    axis.set_title("pretrained", fontsize="small")


def plot_metric(table: pd.DataFrame, metric: str, split: str, outputs: Sequence[Path]) -> None:
    """One panel per language, one line per trained tokenizer: ``metric`` against vocabulary
    size (log axis). Tokenizers whose size follows from the data (``char``) are single
    markers; pretrained tokenizers get a side panel sharing the metric axis, one labelled
    marker each (name and vocabulary size).
    """
    subset = table[(table["metric"] == metric) & (table["split"] == split)]
    pretrained = subset["kind"] == "pretrained"
    languages = sorted(subset["language"].unique())
    panels = max(1, len(languages))
    columns = min(PANEL_COLUMNS, panels)
    rows_count = math.ceil(panels / columns)
    width = 4.2 * columns * (1.4 if pretrained.any() else 1.0)
    figure = plt.figure(figsize=(width, 3.4 * rows_count))
    grid = figure.add_gridspec(rows_count, columns)
    first_axis = None
    for index, language in enumerate(languages):
        cell = grid[index // columns, index % columns]
        here = subset["language"] == language
        trained_rows, pretrained_rows = subset[here & ~pretrained], subset[here & pretrained]
        if pretrained.any():
            inner = cell.subgridspec(1, 2, width_ratios=[3, 1.3], wspace=0.05)
            axis = figure.add_subplot(inner[0])
            _plot_pretrained(figure.add_subplot(inner[1], sharey=axis), pretrained_rows)
        else:
            axis = figure.add_subplot(cell)
        _plot_trained(axis, trained_rows, metric)
        axis.set_title(language)
        first_axis = first_axis or axis
    if first_axis is not None:
        first_axis.legend(fontsize="small")
    figure.suptitle(f"{metric} ({split})")
    save_figure(figure, outputs)


def plot_split(
    table: Path, split: str, metrics: Sequence[str], outputs: Mapping[str, Path]
) -> None:
    """One plot (:func:`plot_metric`) per metric of one split from the tidy metrics table's
    CSV, into ``outputs`` ``{metric}_png`` and ``{metric}_pdf`` (rule ``plot_metrics``)."""
    frame = pd.read_csv(table)
    for metric in metrics:
        plot_metric(frame, metric, split, _plot_files(outputs, metric))


def _plot_files(outputs: Mapping[str, Path], name: str) -> list[Path]:
    """A plot's two files among ``outputs``: ``{name}_png`` and ``{name}_pdf``."""
    return [Path(outputs[f"{name}_{ext}"]) for ext in ("png", "pdf")]


def plot_language_frequencies(
    tables: Sequence[Path],
    plots: Mapping[str, Sequence[str]],
    vocab_size: str,
    skip_top: int,
    outputs: Mapping[str, Path],
) -> None:
    """The token-frequency plot (:func:`plot_frequencies`) of each language of ``plots``
    (language → its tokenizers' labels), from the frequency ``tables`` of those tokenizers
    in that order, into ``outputs`` ``{language}_png`` and ``{language}_pdf`` (rule
    ``plot_frequencies``)."""
    remaining = iter(tables)
    for language, labels in plots.items():
        frequencies = {label: training_frequencies(next(remaining)) for label in labels}
        plot_frequencies(
            frequencies, language, vocab_size, skip_top, _plot_files(outputs, language)
        )


def training_frequencies(path: Path) -> np.ndarray:
    """The ``train_frequency`` column of a cell's frequency table (``frequencies.tsv``).

    Rows end at ``\n`` only: a token holding a bare ``\r`` (written unquoted, as by
    pandas) is not a line break.
    """
    table = pd.read_csv(path, sep="\t", lineterminator="\n", usecols=["train_frequency"])
    return table["train_frequency"].to_numpy()


def plot_frequencies(
    frequencies: Mapping[str, np.ndarray],
    language: str,
    size: str,
    skip_top: int,
    outputs: Sequence[Path],
) -> None:
    """Rank against frequency (log–log), skipping the ``skip_top`` most frequent ranks;
    ``size``: the cells' size label (the title names it unless ``full``)."""
    figure, axes = panel_grid(1)
    axis = axes.flat[0]
    for tokenizer in sorted(frequencies):
        ranked = np.sort(frequencies[tokenizer][frequencies[tokenizer] > 0])[::-1]
        ranks = np.arange(1, len(ranked) + 1)
        colour = tokenizer_colour(tokenizer.split(" ")[0])
        axis.plot(ranks[skip_top:], ranked[skip_top:], label=tokenizer, linewidth=1, color=colour)
    axis.set_xscale("log")
    axis.set_yscale("log")
    plain_log_ticks(axis)
    axis.set_xlabel(f"rank (top {skip_top} skipped)")
    axis.set_ylabel("frequency in training text")
    vocabulary = "" if size == FULL_SIZE_LABEL else f", vocabulary {size}"
    axis.set_title(f"{language}{vocabulary}")
    if frequencies:
        axis.legend(fontsize="small")
    save_figure(figure, outputs)


def plain_log_ticks(axis: plt.Axes) -> None:
    """Tick labels of a log–log panel as plain numbers (``200``, ``5,000``), never
    ``2×10²``: the minor ticks of a range under a decade are labelled like the major ones."""
    for scale in (axis.xaxis, axis.yaxis):
        scale.set_major_formatter(ticker.FuncFormatter(_plain))
        scale.set_minor_formatter(ticker.FuncFormatter(_plain_minor(scale)))


def _plain(value: float, _position: int | None = None) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _plain_minor(scale: Any) -> Callable[[float, int | None], str]:
    """Label a minor tick only when its axis spans less than a decade (there are then too
    few major ticks to read it) and only at 2 and 5 times a power of ten."""

    def label(value: float, _position: int | None = None) -> str:
        low, high = sorted(scale.get_view_interval())
        first_digit = round(value / 10 ** np.floor(np.log10(value)))
        spans_a_decade = low > 0 and high / low >= 10
        return "" if spans_a_decade or first_digit not in (2, 5) else _plain(value)

    return label


#: (step, column, axis label) of the panels of :func:`plot_cost`
COST_PANELS = [
    ("train", "seconds", "training time (s),\nnumba compilation excluded"),
    ("train", "max_rss_mb", "training peak memory (MB)"),
    ("metrics", "encode_mb_s", "metric pass (MB of text/s)"),
]
#: bands under every line: each tokenizer's band is drawn beneath all lines, faint enough
#: that overlapping bands never hide a line
BAND_ALPHA, BAND_ZORDER, LINE_ZORDER = 0.08, 1, 3


def plotted_costs(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the cost table that :func:`plot_cost` draws, as it draws them: those of a
    requested size (``vocab_size``), with ``seconds`` less ``compile_seconds``."""
    return table[table["vocab_size"].notna()].assign(
        vocab_size=lambda frame: frame["vocab_size"].astype(int),
        seconds=lambda frame: frame["seconds"] - frame["compile_seconds"].fillna(0.0),
    )


def plot_cost(table: pd.DataFrame, outputs: Sequence[Path]) -> None:
    """Training time, training peak memory and metric throughput against vocabulary size.

    Rows ``train`` and ``metrics`` of the cost table (the phases of the cell jobs), without
    the one-off of compiling numba kernels (``compile_seconds``). One
    line per tokenizer: the median over languages, a band from their minimum to their
    maximum. Only sized jobs are drawn (a tokenizer of size ``full`` has no x position).
    """
    sized = plotted_costs(table)
    figure, axes = panel_grid(len(COST_PANELS))
    for axis, (step, column, label) in zip(axes.flat, COST_PANELS, strict=True):
        rows = sized[(sized["step"] == step) & sized[column].notna()]
        for tokenizer, group in sorted(rows.groupby("tokenizer"), key=lambda item: item[0]):
            spread = group.groupby("vocab_size")[column].agg(["median", "min", "max"])
            (line,) = axis.plot(
                spread.index,
                spread["median"],
                "o-",
                label=tokenizer,
                markersize=3,
                color=tokenizer_colour(tokenizer),
                zorder=LINE_ZORDER,
            )
            axis.fill_between(
                spread.index,
                spread["min"],
                spread["max"],
                color=line.get_color(),
                alpha=BAND_ALPHA,
                linewidth=0,
                zorder=BAND_ZORDER,
            )
        sizes = sorted(rows["vocab_size"].unique())
        axis.set_xscale("log")
        axis.set_xticks(sizes, [str(size) for size in sizes], fontsize="small", rotation=45)
        axis.minorticks_off()
        axis.set_xlabel("vocabulary size")
        axis.set_ylabel(label)
    drawn = [axis for axis in axes.flat if axis.get_legend_handles_labels()[0]]
    if drawn:
        drawn[0].legend(fontsize="small")
    languages = sized.loc[sized["step"] == "train", "language"].nunique()
    figure.suptitle(f"Cost per tokenizer: median over {languages} language(s), band min–max")
    save_figure(figure, outputs)
