"""Steps of ``workflow/rules/analyses/segmentation.smk``."""

from __future__ import annotations

from tokstudy.analyses.segmentation.tables import write_segmentations
from tokstudy.steps import Snakemake
from tokstudy.workflow_step import run_step


def segmentation_table(snakemake: Snakemake) -> None:
    """Side-by-side segmentations of a word list by the tokenizers of one language."""
    run_step(
        snakemake.log[0],
        write_segmentations,
        snakemake.params.words,
        dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
        snakemake.input.train,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.wildcards.language,
    )
