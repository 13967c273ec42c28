"""Snakemake entry point: the model stage's results, statistics tables and noise plot."""

from pathlib import Path

from tokstudy.models.config import EvalConfig, from_mapping
from tokstudy.models.study_tables import summarize_models
from tokstudy.workflow_step import run_step

params = snakemake.params
run_step(
    snakemake.log[0],
    summarize_models,
    {Path(path): keys for path, keys in params.mlm.items()},
    {Path(path): keys for path, keys in params.finetune.items()},
    {Path(path): keys for path, keys in params.predictions.items()},
    Path(snakemake.output.results).parent,
    [Path(snakemake.output.png), Path(snakemake.output.pdf)],
    from_mapping(EvalConfig, params.evaluation, "models.evaluation"),
)
