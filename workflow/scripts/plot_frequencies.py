"""Snakemake script of rule plot_frequencies (workflow/rules/report.smk)."""

from tokstudy.steps.report import plot_frequencies

plot_frequencies(snakemake)
