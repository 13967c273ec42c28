"""Snakemake script of rule compute_metrics (workflow/rules/metrics.smk)."""

from tokstudy.steps.metrics import compute_metrics

compute_metrics(snakemake)
