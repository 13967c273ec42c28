"""Steps of ``workflow/rules/nmt.smk`` that are not a library function: the NMT tokenizers'
training, which is rule ``train_tokenizer``'s step (the other rules name their function)."""

from __future__ import annotations

from tokstudy.workflow.snakemake_job import Snakemake
from tokstudy.workflow.tokenizers import steps as tokenizer_steps


def nmt_train_tokenizer(snakemake: Snakemake) -> None:
    """One source, target or joint tokenizer on the training split: as rule
    ``train_tokenizer``."""
    tokenizer_steps.train_tokenizer(snakemake)
