"""Snakemake script of rule evaluate_mlm (workflow/rules/models.smk)."""

from tokstudy.steps.models import evaluate_mlm

evaluate_mlm(snakemake)
