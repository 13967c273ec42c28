"""Snakemake script of rule cost_table (workflow/rules/report.smk)."""

from tokstudy.steps.report import cost_table

cost_table(snakemake)
