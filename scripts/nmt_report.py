"""Snakemake entry point: Table 1, seed summary, significance and examples of the NMT study."""

from pathlib import Path

from tokstudy.nmt.config import EvaluationConfig
from tokstudy.nmt.entrypoints import report
from tokstudy.training.config import from_mapping
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    report,
    [Path(path) for path in snakemake.input],
    Path(snakemake.output.qualitative).parent,
    from_mapping(EvaluationConfig, snakemake.params.evaluation, "nmt.evaluation"),
)
