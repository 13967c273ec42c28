"""Snakemake entry point: clean, deduplicate and split the NMT parallel corpus."""

from pathlib import Path

from tokstudy.nmt.config import SplitConfig
from tokstudy.nmt.entrypoints import split
from tokstudy.training.config import from_mapping
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    split,
    [Path(path) for path in snakemake.input],
    tuple(snakemake.params.languages),
    Path(snakemake.output.summary).parent,
    from_mapping(SplitConfig, snakemake.params.split, "nmt.split"),
)
