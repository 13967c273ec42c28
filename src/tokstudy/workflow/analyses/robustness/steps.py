"""Steps of ``workflow/rules/analyses/robustness.smk``."""

from __future__ import annotations

from tokstudy.analyses.robustness.tables import plot_robustness, write_robustness
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def robustness(snakemake: Snakemake) -> None:
    """Token inflation and changed words of every tokenizer under each perturbation."""
    run_step(
        snakemake.log[0],
        write_robustness,
        dict(zip(snakemake.params.pud_languages, snakemake.input.pud, strict=True)),
        dict(zip(snakemake.params.heldout_languages, snakemake.input.heldout, strict=True)),
        snakemake.params.tokenizers,
        snakemake.params.perturbations,
        snakemake.params.settings,
        snakemake.output.csv,
        snakemake.output.markdown,
    )


def plot_robustness_heatmap(snakemake: Snakemake) -> None:
    """The heat map of the robustness table."""
    run_step(
        snakemake.log[0],
        plot_robustness,
        snakemake.input[0],
        [snakemake.output.png, snakemake.output.pdf],
    )
