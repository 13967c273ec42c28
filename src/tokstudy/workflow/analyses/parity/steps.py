"""Steps of ``workflow/rules/analyses/parity.smk``."""

from __future__ import annotations

import pandas as pd

from tokstudy.analyses.parity.plots import plot_premiums
from tokstudy.analyses.parity.tables import write_parallel_parity, write_parity
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def tokenization_parity(snakemake: Snakemake) -> None:
    """Tokenization parity target/reference on the line-aligned held-out text."""
    pairs = {
        key: (reference, target)
        for key, reference, target in zip(
            snakemake.params.pairs,
            snakemake.input.reference_tokenizers,
            snakemake.input.target_tokenizers,
            strict=True,
        )
    }
    run_step(
        snakemake.log[0],
        write_parity,
        snakemake.input.reference_text,
        snakemake.input.target_text,
        pairs,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.params.reference,
        snakemake.params.target,
    )


def tokenization_parity_pud(snakemake: Snakemake) -> None:
    """Tokenization premiums over the reference on the multi-parallel corpus (PUD)."""
    run_step(
        snakemake.log[0],
        write_parallel_parity,
        dict(zip(snakemake.params.languages, snakemake.input.corpora, strict=True)),
        snakemake.params.reference,
        snakemake.params.tokenizers,
        dict(snakemake.output.items()),
    )


def plot_parity_pud(snakemake: Snakemake) -> None:
    """Premium heat map and bar charts of the multi-parallel parity."""
    output = snakemake.output
    run_step(
        snakemake.log[0],
        plot_premiums,
        pd.read_csv(snakemake.input[0]),
        snakemake.params.reference,
        [output.heatmap_png, output.heatmap_pdf],
        [output.bars_png, output.bars_pdf],
    )
