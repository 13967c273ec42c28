"""Snakemake entry point: intrinsic metrics of one tokenizer on the train and held-out text."""

from pathlib import Path

from tokstudy.evaluation import evaluate_job
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    evaluate_job,
    Path(snakemake.input.tokenizer),
    {"train": Path(snakemake.input.train), "heldout": Path(snakemake.input.heldout)},
    Path(snakemake.output.metrics),
    Path(snakemake.output.frequencies),
    snakemake.params.language,
)
