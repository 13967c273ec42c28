"""Steps of ``workflow/rules/corpora.smk``: download and prepare the corpora."""

from __future__ import annotations

from pathlib import Path

from tokstudy.corpora import prepare
from tokstudy.corpora.sources import CorpusSource
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
    """Clean a language's raw text, take its share and split it into train / held-out,
    with its stats (the source: the input files, read as ``settings["source"]`` says)."""
    settings = dict(snakemake.params.settings)
    source = CorpusSource(files=tuple(Path(p) for p in snakemake.input), **settings.pop("source"))
    run_step(
        snakemake.log[0],
        prepare.prepare_corpus,
        source,
        Path(snakemake.output.train),
        Path(snakemake.output.heldout),
        Path(snakemake.output.stats),
        label=snakemake.wildcards.language,
        code=code_record(snakemake),
        **settings,
    )
