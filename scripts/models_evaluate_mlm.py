"""Snakemake entry point: MLM metrics of one model on clean and noised held-out text."""

from pathlib import Path

import torch

from tokstudy.models.config import EvalConfig, from_mapping
from tokstudy.models.entrypoints import evaluate_mlm
from tokstudy.models.pretrain import MODEL_DIR
from tokstudy.workflow_step import optional_path, run_step

torch.set_num_threads(snakemake.threads)
run_step(
    snakemake.log[0],
    evaluate_mlm,
    Path(snakemake.input.pretrained) / MODEL_DIR,
    optional_path(snakemake.input.tokenizer),
    Path(snakemake.input.heldout),
    Path(snakemake.output.metrics),
    from_mapping(EvalConfig, snakemake.params.config, "models.evaluation"),
    edits_tsv=Path(snakemake.output.edits),
)
