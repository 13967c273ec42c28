"""Steps of ``workflow/rules/analyses/udhr.smk``."""

from __future__ import annotations

from pathlib import Path

from tokstudy.analyses.udhr.plots import plot_udhr_premiums
from tokstudy.analyses.udhr.tables import read_udhr_table, write_udhr_parity
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def tokenization_parity_udhr(snakemake: Snakemake) -> None:
    """Tokenization premiums over the reference translation on the UDHR."""
    run_step(
        snakemake.log[0],
        write_udhr_parity,
        Path(snakemake.input.index),
        dict(zip(snakemake.params.translations, snakemake.input.translations, strict=True)),
        snakemake.params.reference,
        snakemake.params.tokenizers,
        dict(snakemake.output.items()),
        snakemake.threads,
    )


def plot_parity_udhr(snakemake: Snakemake) -> None:
    """World map, sorted curves and script heat map of the UDHR premiums."""
    output = snakemake.output
    run_step(
        snakemake.log[0],
        plot_udhr_premiums,
        read_udhr_table(snakemake.input.table),
        read_udhr_table(snakemake.input.scripts),
        snakemake.params.reference,
        {plot: [output[f"{plot}_png"], output[f"{plot}_pdf"]] for plot in snakemake.params.plots},
    )
