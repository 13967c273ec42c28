"""Snakemake entry point: token-frequency distributions of one language at one size."""

from pathlib import Path

from tokstudy.evaluation import read_training_frequencies
from tokstudy.report.plots import plot_frequencies
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    plot_frequencies,
    {
        name: read_training_frequencies(Path(path))
        for name, path in zip(snakemake.params.tokenizers, snakemake.input, strict=True)
    },
    snakemake.wildcards.language,
    snakemake.params.vocab_size,
    snakemake.params.skip_top,
    list(snakemake.output),
)
