"""Steps of ``workflow/rules/metrics.smk``: intrinsic metrics per cell, and their table."""

from __future__ import annotations

from pathlib import Path

from tokstudy.cell_job import evaluate_job
from tokstudy.report.tables import collect
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
