"""Snakemake script of rule nmt_tokenizer_metrics (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import nmt_tokenizer_metrics

nmt_tokenizer_metrics(snakemake)
