"""Steps of ``workflow/rules/metrics.smk``: intrinsic metrics per cell, their table, its wide
tables and plots, the token-frequency plots and the cost table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from tokstudy.report import plots
from tokstudy.report.cost import CostSource, write_cost
from tokstudy.report.tables import collect, write_wide_tables
from tokstudy.workflow.cell_job import evaluate_job, read_training_frequencies
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake
from tokstudy.write_errors import naming_write_failures


def compute_metrics(snakemake: Snakemake) -> None:
    """Intrinsic metrics of one tokenizer on the train and held-out text, and frequencies.

    Also what rule ``nmt_tokenizer_metrics`` runs
    (:func:`tokstudy.workflow.nmt.steps.nmt_tokenizer_metrics`).
    """
    run_step(
        snakemake.log[0],
        evaluate_job,
        Path(snakemake.input.tokenizer),
        {"train": Path(snakemake.input.train), "heldout": Path(snakemake.input.heldout)},
        Path(snakemake.output.metrics),
        Path(snakemake.output.frequencies),
        snakemake.params.language,
    )


def collect_metrics(snakemake: Snakemake) -> None:
    """The tidy metrics table of the whole study, from the per-cell metric files."""
    run_step(
        snakemake.log[0], _write_collected, [Path(p) for p in snakemake.input], snakemake.output[0]
    )


def _write_collected(metric_files: list[Path], table: Path) -> None:
    """Concatenate the per-cell metric files into one CSV table."""
    collected = collect(metric_files)
    with naming_write_failures(table, "the table"):
        collected.to_csv(table, index=False)


def metric_tables(snakemake: Snakemake) -> None:
    """Wide per-metric tables (Markdown and LaTeX) of one split."""
    run_step(
        snakemake.log[0],
        write_wide_tables,
        pd.read_csv(snakemake.input[0]),
        snakemake.params.metrics,
        snakemake.wildcards.split,
        snakemake.output.markdown,
        snakemake.output.latex,
    )


def plot_metrics(snakemake: Snakemake) -> None:
    """Every metric of ``params.metrics`` against vocabulary size on split ``{split}``: a
    PNG and a PDF each, outputs named ``{metric}_{png,pdf}``."""
    outputs = {metric: _plot_files(snakemake, metric) for metric in snakemake.params.metrics}
    run_step(
        snakemake.log[0],
        _plot_split,
        Path(snakemake.input[0]),
        snakemake.wildcards.split,
        outputs,
    )


def _plot_files(snakemake: Snakemake, name: str) -> list[Path]:
    """A plot's two outputs, ``{name}_png`` and ``{name}_pdf``."""
    return [Path(snakemake.output[f"{name}_{ext}"]) for ext in ("png", "pdf")]


def _plot_split(table: Path, split: str, outputs: Mapping[str, Sequence[Path]]) -> None:
    """One plot per metric of one split, into its files."""
    metrics = pd.read_csv(table)
    for metric, files in outputs.items():
        plots.plot_metric(metrics, metric, split, files)


def plot_frequencies(snakemake: Snakemake) -> None:
    """Token-frequency distributions of each language's tokenizers at one size: per
    language of ``params.plots``, its tokenizers' labels, their frequency tables in that
    order among the inputs, and outputs ``{language}_{png,pdf}``."""
    tables = iter(snakemake.input)
    plotted = {
        language: (
            {label: Path(next(tables)) for label in labels},
            _plot_files(snakemake, language),
        )
        for language, labels in snakemake.params.plots.items()
    }
    run_step(
        snakemake.log[0],
        _plot_all_frequencies,
        plotted,
        snakemake.params.vocab_size,
        snakemake.params.skip_top,
    )


def _plot_all_frequencies(
    plotted: Mapping[str, tuple[Mapping[str, Path], Sequence[Path]]],
    vocab_size: str,
    skip_top: int,
) -> None:
    """One frequency plot per language: its tokenizers' frequency tables into its files."""
    for language, (tables, files) in plotted.items():
        frequencies = {label: read_training_frequencies(path) for label, path in tables.items()}
        plots.plot_frequencies(frequencies, language, vocab_size, skip_top, files)


def cost_table(snakemake: Snakemake) -> None:
    """The study's cost table (``tables/cost.csv``) and its plot, from the jobs' benchmark
    and phase files."""
    sources = [
        CostSource(
            **{
                **source,
                "figures": Path(source["figures"]),
                "texts": tuple(map(Path, source["texts"])),
            }
        )
        for source in snakemake.params.sources
    ]
    run_step(
        snakemake.log[0],
        write_cost,
        sources,
        Path(snakemake.output.csv),
        [Path(snakemake.output.png), Path(snakemake.output.pdf)],
    )
