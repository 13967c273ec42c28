"""Snakemake entry point: tokenization parity on the line-aligned held-out text."""

from tokstudy.analysis.run import write_parity
from tokstudy.workflow_step import run_step

tokenizers = snakemake.input.reference_tokenizers
run_step(
    snakemake.log[0],
    write_parity,
    snakemake.input.reference_text,
    snakemake.input.target_text,
    {
        key: (ref, tgt)
        for key, ref, tgt in zip(
            snakemake.params.pairs, tokenizers, snakemake.input.target_tokenizers, strict=True
        )
    },
    snakemake.output.csv,
    snakemake.output.markdown,
    snakemake.params.reference,
    snakemake.params.target,
)
