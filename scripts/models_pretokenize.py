"""Snakemake entry point: tokenize a training text once for MLM pretraining (every seed)."""

from pathlib import Path

from tokstudy.models.entrypoints import pretokenize_corpus
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    pretokenize_corpus,
    Path(snakemake.input.tokenizer),
    Path(snakemake.input.train),
    Path(snakemake.output[0]),
    whole_word_mask=snakemake.params.whole_word_mask,
)
