"""Snakemake entry point: pretrain one BERT or CharacterBERT (one seed) with the rule's threads."""

from pathlib import Path

import torch

from tokstudy.models.config import PretrainConfig, from_mapping
from tokstudy.models.entrypoints import pretrain
from tokstudy.workflow_step import optional_path, run_step

torch.set_num_threads(snakemake.threads)
run_step(
    snakemake.log[0],
    pretrain,
    optional_path(snakemake.input.tokenizer),
    Path(snakemake.input.corpus),
    Path(snakemake.output[0]),
    from_mapping(PretrainConfig, snakemake.params.config, "models.pretrain"),
)
