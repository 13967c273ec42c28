"""Snakemake script of rule tokenization_parity_pud (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import tokenization_parity_pud

tokenization_parity_pud(snakemake)
