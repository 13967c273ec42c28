"""Snakemake entry point: every metric against vocabulary size, one plot per metric and split."""

from pathlib import Path

import pandas as pd

from tokstudy.report.plots import plot_metric
from tokstudy.workflow_step import run_step


def plot_all(table: pd.DataFrame) -> None:
    """One PNG and one PDF per (metric, split) of the rule's params."""
    for metric, split in snakemake.params.plots:
        outputs = [Path(snakemake.output[f"{metric}_{split}_{ext}"]) for ext in ("png", "pdf")]
        plot_metric(table, metric, split, outputs)


run_step(snakemake.log[0], plot_all, pd.read_csv(snakemake.input[0]))
