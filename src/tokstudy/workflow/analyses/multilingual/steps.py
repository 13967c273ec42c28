"""Steps of ``workflow/rules/analyses/multilingual.smk``."""

from __future__ import annotations

import pandas as pd

from tokstudy.analyses.multilingual.plots import plot_vocabulary_share
from tokstudy.analyses.multilingual.tables import (
    write_multilingual_corpus,
    write_multilingual_tables,
)
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def multilingual_corpus(snakemake: Snakemake) -> None:
    """The temperature-sampled mixed text of the multilingual tokenizers, and its mix."""
    run_step(
        snakemake.log[0],
        write_multilingual_corpus,
        dict(zip(snakemake.params.languages, snakemake.input, strict=True)),
        snakemake.output.train,
        snakemake.output.summary,
        **snakemake.params.sampling,
        languages=snakemake.output.languages,
    )


def multilingual_tables(snakemake: Snakemake) -> None:
    """Per-language vocabulary share and fertility of the multilingual tokenizers."""
    languages = snakemake.params.languages
    run_step(
        snakemake.log[0],
        write_multilingual_tables,
        dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
        dict(zip(languages, snakemake.input.train, strict=True)),
        dict(zip(languages, snakemake.input.heldout, strict=True)),
        snakemake.input.mix,
        dict(snakemake.output.items()),
    )


def plot_multilingual(snakemake: Snakemake) -> None:
    """Per-language vocabulary share of the multilingual tokenizers (PNG and PDF)."""
    run_step(
        snakemake.log[0],
        plot_vocabulary_share,
        pd.read_csv(snakemake.input[0]),
        list(snakemake.output),
    )
