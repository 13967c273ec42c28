"""Snakemake script of rule correlation (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import correlation

correlation(snakemake)
