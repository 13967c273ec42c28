"""Steps of ``workflow/rules/nmt.smk``: the NMT study, from the parallel corpus to Table 1.

Only :func:`nmt_train` and :func:`nmt_translate` import ``torch`` and ``transformers``
(through :mod:`tokstudy.nmt.runs`), so that the light jobs start fast.
"""

from __future__ import annotations

from pathlib import Path

from tokstudy.nmt import data, report, scoring
from tokstudy.nmt.cldr import write_cldr_corpus
from tokstudy.nmt.config import DecodeConfig, EvaluationConfig, SplitConfig, TrainConfig
from tokstudy.training.config import from_mapping
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.metrics import steps as metric_steps
from tokstudy.workflow.snakemake_job import Snakemake
from tokstudy.workflow.tokenizers import steps as tokenizer_steps
from tokstudy.workflow.training_state import checkpoint_root


def nmt_cldr_corpus(snakemake: Snakemake) -> None:
    """The built-in CLDR display-name corpus of the NMT language pair."""
    run_step(
        snakemake.log[0],
        write_cldr_corpus,
        tuple(snakemake.params.languages),
        Path(snakemake.output[0]),
    )


def nmt_split(snakemake: Snakemake) -> None:
    """Clean, deduplicate and split the parallel corpus (the output ``summary``'s folder)."""
    run_step(
        snakemake.log[0],
        data.split_corpus,
        [Path(path) for path in snakemake.input],
        tuple(snakemake.params.languages),
        Path(snakemake.output.summary).parent,
        from_mapping(SplitConfig, snakemake.params.split, "nmt.split"),
    )


def nmt_joint_text(snakemake: Snakemake) -> None:
    """Both sides of the training split in one file, the text of a joint tokenizer."""
    output = Path(snakemake.output[0])
    run_step(
        snakemake.log[0],
        data.joint_training_text,
        output.parent,
        tuple(snakemake.params.languages),
        output,
    )


def nmt_train_tokenizer(snakemake: Snakemake) -> None:
    """One source, target or joint tokenizer on the training split: as rule
    ``train_tokenizer``."""
    tokenizer_steps.train_tokenizer(snakemake)


def _run_inputs(snakemake: Snakemake) -> tuple[Path, str, Path, Path]:
    """A run's split folder, direction, source and target tokenizer folders."""
    return (
        Path(snakemake.input.split).parent,
        snakemake.wildcards.direction,
        Path(snakemake.input.source_tokenizer),
        Path(snakemake.input.target_tokenizer),
    )


def nmt_train(snakemake: Snakemake) -> None:
    """Train one translation model (one seed) with the job's threads."""
    import torch

    from tokstudy.nmt.runs import train

    torch.set_num_threads(snakemake.threads)
    run_step(
        snakemake.log[0],
        train,
        *_run_inputs(snakemake),
        Path(snakemake.output[0]),
        from_mapping(TrainConfig, snakemake.params.config, "nmt.train"),
        checkpoint_root(snakemake.params.checkpoints, snakemake.params.code),
    )


def nmt_translate(snakemake: Snakemake) -> None:
    """Beam-search the test split with one trained translation model."""
    import torch

    from tokstudy.nmt.runs import translate_split

    torch.set_num_threads(snakemake.threads)
    run_step(
        snakemake.log[0],
        translate_split,
        Path(snakemake.input.run),
        *_run_inputs(snakemake),
        Path(snakemake.output[0]),
        from_mapping(DecodeConfig, snakemake.params.decode, "nmt.decode"),
    )


def nmt_score(snakemake: Snakemake) -> None:
    """sacreBLEU (BLEU, chrF) of one run's detokenized test translations."""
    wildcards = snakemake.wildcards
    run_step(
        snakemake.log[0],
        scoring.score_run,
        Path(snakemake.input.hypotheses),
        Path(snakemake.input.split).parent,
        wildcards.direction,
        Path(snakemake.input.target_tokenizer),
        Path(snakemake.output[0]),
        tokenizer=wildcards.tokenizer,
        vocab_size=wildcards.size,
        seed=int(wildcards.seed),
    )


def nmt_report(snakemake: Snakemake) -> None:
    """Table 1, seed summary, significance and examples (the output ``qualitative``'s
    folder)."""
    run_step(
        snakemake.log[0],
        report.write_report,
        [Path(path) for path in snakemake.input],
        Path(snakemake.output.qualitative).parent,
        from_mapping(EvaluationConfig, snakemake.params.evaluation, "nmt.evaluation"),
    )


def nmt_tokenizer_metrics(snakemake: Snakemake) -> None:
    """Intrinsic metrics of an NMT tokenizer on its split: as rule ``compute_metrics``."""
    metric_steps.compute_metrics(snakemake)
