"""Snakemake entry point: premium heat map and bar charts of the multi-parallel parity."""

import pandas as pd

from tokstudy.report.parity_plots import plot_premiums
from tokstudy.workflow_step import run_step

out = snakemake.output
run_step(
    snakemake.log[0],
    plot_premiums,
    pd.read_csv(snakemake.input[0]),
    snakemake.params.reference,
    [out.heatmap_png, out.heatmap_pdf],
    [out.bars_png, out.bars_pdf],
)
