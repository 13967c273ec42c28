"""Snakemake entry point: check a pretrained tokenizer once and write its tokstudy directory."""

from pathlib import Path

from tokstudy.tokenizers.pretrained import import_pretrained
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    import_pretrained,
    snakemake.wildcards.name,
    dict(snakemake.params.entry),
    Path(snakemake.input[0]),
    Path(snakemake.output[0]),
)
