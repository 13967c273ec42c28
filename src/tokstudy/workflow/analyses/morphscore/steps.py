"""Steps of ``workflow/rules/analyses/morphscore.smk``."""

from __future__ import annotations

from tokstudy.analyses.morphscore.tables import plot_morphscore, write_morphscore
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def morphscore(snakemake: Snakemake) -> None:
    """MorphScore of every tokenizer on the treebanks of the languages it covers."""
    run_step(
        snakemake.log[0],
        write_morphscore,
        snakemake.params.treebanks,
        snakemake.params.tokenizers,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.output.json,
        snakemake.params.uncovered,
    )


def plot_morphscore_heatmap(snakemake: Snakemake) -> None:
    """The heat map of the MorphScore table."""
    run_step(
        snakemake.log[0],
        plot_morphscore,
        snakemake.input[0],
        [snakemake.output.png, snakemake.output.pdf],
    )
