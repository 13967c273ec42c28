"""Snakemake entry point: download a pretrained tokenizer.json (``hub:``), verify its sha256."""

from pathlib import Path

from tokstudy.tokenizers.pretrained import download_hub_file
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    download_hub_file,
    snakemake.params.url,
    snakemake.params.sha256,
    Path(snakemake.output[0]),
    snakemake.wildcards.name,
)
