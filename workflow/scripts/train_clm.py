"""Snakemake script of rule train_clm (workflow/rules/models.smk)."""

from tokstudy.steps.models import train_clm

train_clm(snakemake)
