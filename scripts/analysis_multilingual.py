"""Snakemake entry point: per-language vocabulary share and fertility of multilingual tokenizers."""

from tokstudy.analysis.run import write_multilingual_tables
from tokstudy.workflow_step import run_step

languages = snakemake.params.languages
run_step(
    snakemake.log[0],
    write_multilingual_tables,
    dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
    dict(zip(languages, snakemake.input.train, strict=True)),
    dict(zip(languages, snakemake.input.heldout, strict=True)),
    snakemake.input.mix,
    dict(snakemake.output.items()),
)
