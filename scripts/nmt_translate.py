"""Snakemake entry point: beam-search the test split with one trained translation model."""

from pathlib import Path

import torch

from tokstudy.nmt.config import DecodeConfig
from tokstudy.nmt.model_jobs import translate_split
from tokstudy.training.config import from_mapping
from tokstudy.workflow_step import run_step

torch.set_num_threads(snakemake.threads)
run_step(
    snakemake.log[0],
    translate_split,
    Path(snakemake.input.run),
    Path(snakemake.input.split).parent,
    snakemake.wildcards.direction,
    Path(snakemake.input.source_tokenizer),
    Path(snakemake.input.target_tokenizer),
    Path(snakemake.output[0]),
    from_mapping(DecodeConfig, snakemake.params.decode, "nmt.decode"),
)
