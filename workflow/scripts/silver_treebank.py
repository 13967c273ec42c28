"""Snakemake script of rule silver_treebank (workflow/rules/models.smk)."""

from tokstudy.steps.models import silver_treebank

silver_treebank(snakemake)
