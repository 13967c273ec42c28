"""Snakemake script of rule plot_parity_udhr (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import plot_parity_udhr

plot_parity_udhr(snakemake)
