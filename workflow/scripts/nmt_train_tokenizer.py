"""Snakemake script of rule nmt_train_tokenizer (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_train_tokenizer

nmt_train_tokenizer(snakemake)
