"""Snakemake entry point: a silver-label (HanTa-tagged) CoNLL-U treebank of one language."""

from pathlib import Path

from tokstudy.models.silver import make_silver_treebank
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    make_silver_treebank,
    Path(snakemake.input.train),
    Path(snakemake.input.heldout),
    Path(snakemake.output[0]),
    name=f"{snakemake.wildcards.language}_silver",
    seed=snakemake.params.seed,
)
