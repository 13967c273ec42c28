"""Snakemake script of rule tokenization_parity (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import tokenization_parity

tokenization_parity(snakemake)
