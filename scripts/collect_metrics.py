"""Snakemake entry point: the tidy metrics table of the whole study."""

from pathlib import Path

from tokstudy.report.tables import collect
from tokstudy.workflow_step import run_step


def write_table() -> None:
    """Concatenate the per-job metric files into results/tables/metrics.csv."""
    collect([Path(p) for p in snakemake.input]).to_csv(snakemake.output[0], index=False)


run_step(snakemake.log[0], write_table)
