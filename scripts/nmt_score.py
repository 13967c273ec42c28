"""Snakemake entry point: sacreBLEU (BLEU, chrF) of one run's detokenized test translations."""

from pathlib import Path

from tokstudy.nmt.entrypoints import score
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    score,
    Path(snakemake.input.hypotheses),
    Path(snakemake.input.split).parent,
    snakemake.wildcards.direction,
    Path(snakemake.input.target_tokenizer),
    Path(snakemake.output[0]),
    tokenizer=snakemake.wildcards.tokenizer,
    vocab_size=snakemake.wildcards.size,
    seed=int(snakemake.wildcards.seed),
)
