"""Snakemake entry point: train one tokenizer at one vocabulary size on one language."""

from pathlib import Path

from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.io import train_to_directory
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    train_to_directory,
    snakemake.wildcards.tokenizer,
    Path(snakemake.input.train),
    TrainSpec(threads=snakemake.threads, **snakemake.params.spec),
    Path(snakemake.output[0]),
)
