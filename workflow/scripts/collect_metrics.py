"""Snakemake script of rule collect_metrics (workflow/rules/metrics.smk)."""

from tokstudy.steps.metrics import collect_metrics

collect_metrics(snakemake)
