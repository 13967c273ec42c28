"""Snakemake entry point: both sides of the NMT training split, for a joint tokenizer."""

from pathlib import Path

from tokstudy.nmt.entrypoints import joint_training_text
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    joint_training_text,
    Path(snakemake.output[0]).parent,
    tuple(snakemake.params.languages),
    Path(snakemake.output[0]),
)
