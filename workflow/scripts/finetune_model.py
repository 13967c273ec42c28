"""Snakemake script of rule finetune_model (workflow/rules/models.smk)."""

from tokstudy.steps.models import finetune_model

finetune_model(snakemake)
