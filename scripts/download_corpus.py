"""Snakemake entry point: download a corpus and verify its SHA-256 checksum."""

from pathlib import Path

from tokstudy.corpora import download
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    download,
    snakemake.params.url,
    snakemake.params.sha256,
    Path(snakemake.output[0]),
    snakemake.wildcards.language,
)
