"""Snakemake script of rule study_page (workflow/rules/report.smk)."""

from tokstudy.steps.report import study_page

study_page(snakemake)
