"""Snakemake script of rule train_tokenizer (workflow/rules/tokenizers.smk)."""

from tokstudy.steps.tokenizers import train_tokenizer

train_tokenizer(snakemake)
