"""Snakemake script of rule segmentation_table (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import segmentation_table

segmentation_table(snakemake)
