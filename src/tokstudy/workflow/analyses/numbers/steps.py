"""Steps of ``workflow/rules/analyses/numbers.smk``."""

from __future__ import annotations

from tokstudy.analyses.numbers.tables import plot_numbers, write_numbers
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake


def number_tokens(snakemake: Snakemake) -> None:
    """How every tokenizer cuts the generated numbers and those of PUD and the UDHR."""
    run_step(
        snakemake.log[0],
        write_numbers,
        snakemake.params.seed,
        snakemake.params.per_length,
        snakemake.input.pud,
        snakemake.input.udhr,
        snakemake.params.tokenizers,
        snakemake.output.csv,
        snakemake.output.markdown,
    )


def plot_number_tokens(snakemake: Snakemake) -> None:
    """The plot of tokens per generated integer."""
    run_step(
        snakemake.log[0],
        plot_numbers,
        snakemake.input[0],
        [snakemake.output.png, snakemake.output.pdf],
    )
