"""Snakemake entry point: morphological alignment of every tokenizer with UD lemmas."""

from tokstudy.analysis.run import write_morphological_alignment
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_morphological_alignment,
    snakemake.params.ud_root,
    dict(zip(snakemake.params.jobs, snakemake.input, strict=True)),
    snakemake.output.csv,
    snakemake.output.markdown,
)
