"""Snakemake script of rule pretrain_mlm (workflow/rules/models.smk)."""

from tokstudy.steps.models import pretrain_mlm

pretrain_mlm(snakemake)
