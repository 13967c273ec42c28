"""Steps of ``workflow/rules/analysis.smk``: segmentations, morphological alignment, parity,
multilingual tokenizers and the correlation with downstream scores."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tokstudy.analysis import tables as analyses
from tokstudy.analysis.udhr_tables import read_udhr_table, write_udhr_parity
from tokstudy.report.parity_plots import plot_premiums
from tokstudy.report.parity_udhr_plots import plot_udhr_premiums
from tokstudy.report.plots import plot_vocabulary_share
from tokstudy.steps import Snakemake
from tokstudy.steps import metrics as metric_steps
from tokstudy.steps import tokenizers as tokenizer_steps
from tokstudy.workflow_step import optional_path, run_step


def segmentation_table(snakemake: Snakemake) -> None:
    """Side-by-side segmentations of a word list by the tokenizers of one language."""
    run_step(
        snakemake.log[0],
        analyses.write_segmentations,
        snakemake.params.words,
        dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
        snakemake.input.train,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.wildcards.language,
    )


def morphological_alignment(snakemake: Snakemake) -> None:
    """Morphological alignment of every tokenizer with UD lemmas (inputs in ``params.jobs``
    order)."""
    run_step(
        snakemake.log[0],
        analyses.write_morphological_alignment,
        snakemake.params.ud_root,
        dict(zip(snakemake.params.jobs, snakemake.input, strict=True)),
        snakemake.output.csv,
        snakemake.output.markdown,
    )


def tokenization_parity(snakemake: Snakemake) -> None:
    """Tokenization parity target/reference on the line-aligned held-out text."""
    pairs = {
        key: (reference, target)
        for key, reference, target in zip(
            snakemake.params.pairs,
            snakemake.input.reference_tokenizers,
            snakemake.input.target_tokenizers,
            strict=True,
        )
    }
    run_step(
        snakemake.log[0],
        analyses.write_parity,
        snakemake.input.reference_text,
        snakemake.input.target_text,
        pairs,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.params.reference,
        snakemake.params.target,
    )


def tokenization_parity_pud(snakemake: Snakemake) -> None:
    """Tokenization premiums over the reference on the multi-parallel corpus (PUD)."""
    run_step(
        snakemake.log[0],
        analyses.write_parallel_parity,
        dict(zip(snakemake.params.languages, snakemake.input.corpora, strict=True)),
        snakemake.params.reference,
        snakemake.params.tokenizers,
        dict(snakemake.output.items()),
    )


def plot_parity_pud(snakemake: Snakemake) -> None:
    """Premium heat map and bar charts of the multi-parallel parity."""
    output = snakemake.output
    run_step(
        snakemake.log[0],
        plot_premiums,
        pd.read_csv(snakemake.input[0]),
        snakemake.params.reference,
        [output.heatmap_png, output.heatmap_pdf],
        [output.bars_png, output.bars_pdf],
    )


def tokenization_parity_udhr(snakemake: Snakemake) -> None:
    """Tokenization premiums over the reference translation on the UDHR."""
    run_step(
        snakemake.log[0],
        write_udhr_parity,
        Path(snakemake.input.index),
        dict(zip(snakemake.params.translations, snakemake.input.translations, strict=True)),
        snakemake.params.reference,
        snakemake.params.tokenizers,
        dict(snakemake.output.items()),
        snakemake.threads,
    )


def plot_parity_udhr(snakemake: Snakemake) -> None:
    """World map, sorted curves and script heat map of the UDHR premiums."""
    output = snakemake.output
    run_step(
        snakemake.log[0],
        plot_udhr_premiums,
        read_udhr_table(snakemake.input.table),
        read_udhr_table(snakemake.input.scripts),
        snakemake.params.reference,
        {plot: [output[f"{plot}_png"], output[f"{plot}_pdf"]] for plot in snakemake.params.plots},
    )


def multilingual_corpus(snakemake: Snakemake) -> None:
    """The temperature-sampled mixed text of the multilingual tokenizers, and its mix."""
    run_step(
        snakemake.log[0],
        analyses.write_multilingual_corpus,
        dict(zip(snakemake.params.languages, snakemake.input, strict=True)),
        snakemake.output.train,
        snakemake.output.summary,
        **snakemake.params.sampling,
    )


def train_multilingual_tokenizer(snakemake: Snakemake) -> None:
    """One multilingual tokenizer on the mixed text: as rule ``train_tokenizer``."""
    tokenizer_steps.train_tokenizer(snakemake)


def multilingual_tables(snakemake: Snakemake) -> None:
    """Per-language vocabulary share and fertility of the multilingual tokenizers."""
    languages = snakemake.params.languages
    run_step(
        snakemake.log[0],
        analyses.write_multilingual_tables,
        dict(zip(snakemake.params.tokenizers, snakemake.input.tokenizers, strict=True)),
        dict(zip(languages, snakemake.input.train, strict=True)),
        dict(zip(languages, snakemake.input.heldout, strict=True)),
        snakemake.input.mix,
        dict(snakemake.output.items()),
    )


def plot_multilingual(snakemake: Snakemake) -> None:
    """Per-language vocabulary share of the multilingual tokenizers (PNG and PDF)."""
    run_step(
        snakemake.log[0],
        plot_vocabulary_share,
        pd.read_csv(snakemake.input[0]),
        list(snakemake.output),
    )


def nmt_tokenizer_metrics(snakemake: Snakemake) -> None:
    """Intrinsic metrics of an NMT tokenizer on its split: as rule ``compute_metrics``."""
    metric_steps.compute_metrics(snakemake)


def correlation(snakemake: Snakemake) -> None:
    """Intrinsic metrics against downstream scores: tables, ranking and plot."""
    from tokstudy.analysis.correlation import OUTPUT_FILES, correlation_analysis  # statsmodels

    run_step(
        snakemake.log[0],
        correlation_analysis,
        metrics_csv=Path(snakemake.input.metrics),
        metric_names=list(snakemake.params.metrics),
        model_results=optional_path(snakemake.input.model_results),
        nmt_score_files=[Path(p) for p in snakemake.input.nmt_scores],
        nmt_metric_files=[Path(p) for p in snakemake.input.nmt_metrics],
        nmt_sides=dict(snakemake.params.nmt_sides),
        settings=dict(snakemake.params.settings),
        outputs={
            name: Path(getattr(snakemake.output, name))
            for name in (*OUTPUT_FILES, "png", "cells", "cells_json")
        },
    )
