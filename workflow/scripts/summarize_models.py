"""Snakemake script of rule summarize_models (workflow/rules/models.smk)."""

from tokstudy.steps.models import summarize_models

summarize_models(snakemake)
