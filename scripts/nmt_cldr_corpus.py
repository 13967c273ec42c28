"""Snakemake entry point: the built-in CLDR display-name corpus of the NMT language pair."""

from pathlib import Path

from tokstudy.nmt.cldr import write_cldr_corpus
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_cldr_corpus,
    tuple(snakemake.params.languages),
    Path(snakemake.output[0]),
)
