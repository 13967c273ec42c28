"""Steps of ``workflow/rules/pretrained.smk``: pretrained tokenizers, fetched and imported."""

from __future__ import annotations

from pathlib import Path

from tokstudy.tokenizers import pretrained
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def download_pretrained(snakemake: Snakemake) -> None:
    """Download a pretrained ``tokenizer.json`` (``hub:``) and verify its SHA-256."""
    run_step(
        snakemake.log[0],
        pretrained.download_hub_file,
        snakemake.params.url,
        snakemake.params.sha256,
        Path(snakemake.output[0]),
        snakemake.wildcards.name,
    )


def import_pretrained(snakemake: Snakemake) -> None:
    """Check a pretrained tokenizer once and write its tokstudy directory."""
    run_step(
        snakemake.log[0],
        pretrained.import_pretrained,
        snakemake.wildcards.name,
        dict(snakemake.params.entry),
        Path(snakemake.input[0]),
        Path(snakemake.output[0]),
    )
