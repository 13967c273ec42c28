"""Snakemake script of rule evaluate_clm (workflow/rules/models.smk)."""

from tokstudy.steps.models import evaluate_clm

evaluate_clm(snakemake)
