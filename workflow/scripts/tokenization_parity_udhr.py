"""Snakemake script of rule tokenization_parity_udhr (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import tokenization_parity_udhr

tokenization_parity_udhr(snakemake)
