"""Snakemake entry point: per-language vocabulary share of the multilingual tokenizers."""

import pandas as pd

from tokstudy.report.plots import plot_vocabulary_share
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    plot_vocabulary_share,
    pd.read_csv(snakemake.input[0]),
    list(snakemake.output),
)
