"""Snakemake script of rule metric_tables (workflow/rules/report.smk)."""

from tokstudy.steps.report import metric_tables

metric_tables(snakemake)
