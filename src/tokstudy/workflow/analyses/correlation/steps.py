"""Steps of ``workflow/rules/analyses/correlation.smk``."""

from __future__ import annotations

from pathlib import Path

from tokstudy.workflow.dispatch import optional_path, run_step
from tokstudy.workflow.snakemake_job import Snakemake


def correlation(snakemake: Snakemake) -> None:
    """Intrinsic metrics against downstream scores: tables, ranking and plot."""
    from tokstudy.analyses.correlation.run import OUTPUT_FILES, correlation_analysis  # statsmodels

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
            for name in (
                *OUTPUT_FILES,
                "png",
                "cells",
                "cells_json",
                "sensitivity_csv",
                "sensitivity_markdown",
            )
        },
    )
