"""Snakemake entry point: the study's cost table (tables/cost.csv) and its plot."""

from pathlib import Path

from tokstudy.report.cost import CostSource, write_cost
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_cost,
    [
        CostSource(
            **{
                **source,
                "benchmark": Path(source["benchmark"]),
                "texts": tuple(map(Path, source["texts"])),
            }
        )
        for source in snakemake.params.sources
    ],
    Path(snakemake.output.csv),
    [Path(snakemake.output.png), Path(snakemake.output.pdf)],
)
