"""Snakemake script of rule train_multilingual_tokenizer (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import train_multilingual_tokenizer

train_multilingual_tokenizer(snakemake)
