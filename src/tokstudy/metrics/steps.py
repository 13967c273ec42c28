"""Steps of ``workflow/rules/metrics.smk``: intrinsic metrics per cell, their table, its wide
tables and plots, the token-frequency plots and the cost table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from tokstudy.cell_job import evaluate_job, read_training_frequencies
from tokstudy.report import plots
from tokstudy.report.cost import CostSource, write_cost
from tokstudy.report.tables import collect, write_wide_tables
from tokstudy.steps import Snakemake
from tokstudy.workflow_step import run_step


def compute_metrics(snakemake: Snakemake) -> None:
    """Intrinsic metrics of one tokenizer on the train and held-out text, and frequencies.

    Also what rule ``nmt_tokenizer_metrics`` runs
    (:func:`tokstudy.nmt.steps.nmt_tokenizer_metrics`).
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
    collect(metric_files).to_csv(table, index=False)


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
    """Every metric against vocabulary size: a PNG and a PDF per (metric, split) of
    ``params.plots``, outputs named ``{metric}_{split}_{png,pdf}``."""
    outputs = {
        (metric, split): [
            Path(snakemake.output[f"{metric}_{split}_{ext}"]) for ext in ("png", "pdf")
        ]
        for metric, split in snakemake.params.plots
    }
    run_step(snakemake.log[0], _plot_all_metrics, pd.read_csv(snakemake.input[0]), outputs)


def _plot_all_metrics(
    table: pd.DataFrame, outputs: Mapping[tuple[str, str], Sequence[Path]]
) -> None:
    """One plot per (metric, split), into its files."""
    for (metric, split), files in outputs.items():
        plots.plot_metric(table, metric, split, files)


def plot_frequencies(snakemake: Snakemake) -> None:
    """Token-frequency distributions of one language's tokenizers at one size."""
    run_step(
        snakemake.log[0],
        plots.plot_frequencies,
        {
            name: read_training_frequencies(Path(path))
            for name, path in zip(snakemake.params.tokenizers, snakemake.input, strict=True)
        },
        snakemake.wildcards.language,
        snakemake.params.vocab_size,
        snakemake.params.skip_top,
        list(snakemake.output),
    )


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
