"""Snakemake script of rule prepare_characterbert (workflow/rules/models.smk)."""

from tokstudy.steps.models import prepare_characterbert

prepare_characterbert(snakemake)
