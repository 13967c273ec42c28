"""Snakemake entry point: clean a language's raw text and split it into train / held-out."""

from pathlib import Path

from tokstudy.corpora import prepare_corpus
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    prepare_corpus,
    [Path(p) for p in snakemake.input],
    Path(snakemake.output.train),
    Path(snakemake.output.heldout),
    Path(snakemake.output.stats),
    label=snakemake.wildcards.language,
    **snakemake.params.settings,
)
