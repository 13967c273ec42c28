"""Snakemake entry point: the temperature-sampled mixed text of the multilingual tokenizers."""

from tokstudy.analysis.run import write_multilingual_corpus
from tokstudy.workflow_step import run_step

run_step(
    snakemake.log[0],
    write_multilingual_corpus,
    dict(zip(snakemake.params.languages, snakemake.input, strict=True)),
    snakemake.output.train,
    snakemake.output.summary,
    **snakemake.params.sampling,
)
