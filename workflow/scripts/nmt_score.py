"""Snakemake script of rule nmt_score (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_score

nmt_score(snakemake)
