"""Snakemake entry point: train one translation model (one seed) with the rule's threads."""

from pathlib import Path

import torch

from tokstudy.nmt.config import TrainConfig
from tokstudy.nmt.model_jobs import train
from tokstudy.training.config import from_mapping
from tokstudy.workflow_step import run_step

torch.set_num_threads(snakemake.threads)
run_step(
    snakemake.log[0],
    train,
    Path(snakemake.input.split).parent,
    snakemake.wildcards.direction,
    Path(snakemake.input.source_tokenizer),
    Path(snakemake.input.target_tokenizer),
    Path(snakemake.output[0]),
    from_mapping(TrainConfig, snakemake.params.config, "nmt.train"),
)
