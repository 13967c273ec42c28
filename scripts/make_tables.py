"""Snakemake entry point: wide per-metric tables (Markdown and LaTeX) for one split."""

import pandas as pd

from tokstudy.report.tables import write_wide_tables
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_wide_tables,
    pd.read_csv(snakemake.input[0]),
    snakemake.params.metrics,
    snakemake.wildcards.split,
    snakemake.output.markdown,
    snakemake.output.latex,
)
