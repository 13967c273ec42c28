"""Snakemake entry point: side-by-side segmentations of a word list for one language."""

from tokstudy.analysis.run import write_segmentations
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_segmentations,
    snakemake.params.words,
    dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
    snakemake.input.train,
    snakemake.output.csv,
    snakemake.output.markdown,
    snakemake.wildcards.language,
)
