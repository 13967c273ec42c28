"""Snakemake entry point: CharacterBERT's vocabularies and word corpus of a training text."""

from pathlib import Path

from tokstudy.models.config import CharBertConfig, from_mapping
from tokstudy.models.entrypoints import prepare_characterbert
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    prepare_characterbert,
    Path(snakemake.input.train),
    Path(snakemake.output[0]),
    from_mapping(CharBertConfig, snakemake.params.config, "models.characterbert"),
)
