"""Snakemake script of rule multilingual_tables (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import multilingual_tables

multilingual_tables(snakemake)
