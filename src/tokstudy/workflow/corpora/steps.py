"""Steps of ``workflow/rules/corpora.smk``: download and prepare the corpora."""

from __future__ import annotations

from pathlib import Path

from tokstudy.corpora import prepare
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake, code_record


def download_corpus(snakemake: Snakemake) -> None:
    """Download a corpus and verify its SHA-256 checksum (the wildcard ``sha256``)."""
    url, languages = snakemake.params.source
    run_step(
        snakemake.log[0],
        prepare.download,
        url,
        snakemake.wildcards.sha256,
        Path(snakemake.output[0]),
        languages,
    )


def prepare_corpus(snakemake: Snakemake) -> None:
    """Clean a language's raw text and split it into train / held-out, with its stats."""
    run_step(
        snakemake.log[0],
        prepare.prepare_corpus,
        [Path(p) for p in snakemake.input],
        Path(snakemake.output.train),
        Path(snakemake.output.heldout),
        Path(snakemake.output.stats),
        label=snakemake.wildcards.language,
        code=code_record(snakemake),
        **snakemake.params.settings,
    )
