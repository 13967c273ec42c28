"""Snakemake script of rule morphological_alignment (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import morphological_alignment

morphological_alignment(snakemake)
