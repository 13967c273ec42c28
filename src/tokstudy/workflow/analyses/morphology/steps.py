"""Steps of ``workflow/rules/analyses/morphology.smk``."""

from __future__ import annotations

from tokstudy.analyses.morphology.tables import write_morphological_alignment
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def morphological_alignment(snakemake: Snakemake) -> None:
    """Morphological alignment of every tokenizer with UD lemmas (inputs in ``params.jobs``
    order)."""
    run_step(
        snakemake.log[0],
        write_morphological_alignment,
        snakemake.params.ud_root,
        dict(zip(snakemake.params.jobs, snakemake.input, strict=True)),
        snakemake.output.csv,
        snakemake.output.markdown,
    )
