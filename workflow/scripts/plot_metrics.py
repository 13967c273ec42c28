"""Snakemake script of rule plot_metrics (workflow/rules/report.smk)."""

from tokstudy.steps.report import plot_metrics

plot_metrics(snakemake)
