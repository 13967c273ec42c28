"""Snakemake entry point: intrinsic metrics against downstream scores (tables and plot)."""

from pathlib import Path

from tokstudy.analysis.correlation import correlation_analysis
from tokstudy.workflow_step import optional_path, run_step

run_step(
    snakemake.log[0],
    correlation_analysis,
    metrics_csv=Path(snakemake.input.metrics),
    metric_names=list(snakemake.params.metrics),
    model_results=optional_path(snakemake.input.model_results),
    nmt_score_files=[Path(p) for p in snakemake.input.nmt_scores],
    nmt_metric_files=[Path(p) for p in snakemake.input.nmt_metrics],
    nmt_sides=dict(snakemake.params.nmt_sides),
    settings=dict(snakemake.params.settings),
    outputs={
        name: Path(getattr(snakemake.output, name))
        for name in ("csv", "markdown", "ranking_csv", "ranking_markdown", "png")
    },
)
