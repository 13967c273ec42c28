"""Snakemake script of rule plot_parity_pud (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import plot_parity_pud

plot_parity_pud(snakemake)
