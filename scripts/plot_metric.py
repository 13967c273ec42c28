"""Snakemake entry point: one metric against vocabulary size, per language and tokenizer."""

import pandas as pd

from tokstudy.report.plots import plot_metric
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    plot_metric,
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.metric,
    snakemake.wildcards.split,
    list(snakemake.output),
)
