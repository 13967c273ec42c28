"""Snakemake script of rule nmt_report (workflow/rules/nmt.smk)."""

from tokstudy.steps.nmt import nmt_report

nmt_report(snakemake)
