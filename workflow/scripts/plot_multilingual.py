"""Snakemake script of rule plot_multilingual (workflow/rules/analysis.smk)."""

from tokstudy.steps.analysis import plot_multilingual

plot_multilingual(snakemake)
