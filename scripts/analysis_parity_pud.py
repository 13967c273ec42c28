"""Snakemake entry point: tokenization premiums on the multi-parallel corpus (PUD)."""

from tokstudy.analysis.run import write_parallel_parity
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_parallel_parity,
    dict(zip(snakemake.params.languages, snakemake.input.corpora, strict=True)),
    snakemake.params.reference,
    snakemake.params.tokenizers,
    dict(snakemake.output.items()),
)
