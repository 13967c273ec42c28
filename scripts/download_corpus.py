"""Snakemake entry point: download a corpus and verify its SHA-256 checksum."""

from pathlib import Path

from tokstudy.corpora import download
from tokstudy.workflow_step import run_step

url, languages = snakemake.params.source
run_step(
    snakemake.log[0],
    download,
    url,
    snakemake.wildcards.sha256,
    Path(snakemake.output[0]),
    languages,
)
