"""Snakemake script of rule pretokenize_mlm (workflow/rules/models.smk)."""

from tokstudy.steps.models import pretokenize_mlm

pretokenize_mlm(snakemake)
