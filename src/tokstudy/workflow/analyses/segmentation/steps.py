"""Steps of ``workflow/rules/analyses/segmentation.smk``."""

from __future__ import annotations

from tokstudy.analyses.segmentation.tables import write_segmentations
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


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
