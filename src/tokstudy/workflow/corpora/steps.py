"""Steps of ``workflow/rules/corpora.smk``: prepare the corpora (the download rule names
:func:`tokstudy.corpora.prepare.download`)."""

from __future__ import annotations

from pathlib import Path

from tokstudy.corpora import prepare
from tokstudy.corpora.sources import CorpusSource
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake, code_record


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
