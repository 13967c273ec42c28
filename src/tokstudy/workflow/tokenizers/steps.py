"""Steps of ``workflow/rules/tokenizers.smk``: train one tokenizer of the study and score it.

:func:`train_tokenizer` is also what the multilingual and NMT tokenizer rules run
(:func:`train_multilingual_tokenizer`,
:func:`tokstudy.workflow.nmt.steps.nmt_train_tokenizer`): the same input ``train``, one output
folder and the ``spec`` parameter; without the outputs ``metrics``, ``frequencies`` and
``cost`` of a study cell they only train.
"""

from __future__ import annotations

from pathlib import Path

from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.workflow.cell_job import CellOutputs, train_and_evaluate, train_and_evaluate_sizes
from tokstudy.workflow.dispatch import run_step
from tokstudy.workflow.snakemake_job import Snakemake, code_record


def train_tokenizer(snakemake: Snakemake) -> None:
    """Train tokenizer ``{tokenizer}`` on the text ``train`` into the output folder; for a
    study cell, also its metrics on ``train`` and ``heldout`` and the cost of both phases
    (:func:`~tokstudy.workflow.cell_job.train_and_evaluate`: the training text encoded once).

    ``params.spec`` holds the :class:`~tokstudy.tokenizers.base.TrainSpec` fields but
    ``threads``, which are the job's; ``params.training_code``, the fingerprint of the
    training code, lets a study cell reuse the tokenizer already in its folder.
    """
    spec = TrainSpec(threads=snakemake.threads, **snakemake.params.spec)
    name, folder = snakemake.wildcards.tokenizer, Path(snakemake.output[0])
    train = Path(snakemake.input.train)
    if not hasattr(snakemake.output, "metrics"):  # a multilingual or NMT tokenizer
        run_step(
            snakemake.log[0], train_to_directory, name, train, spec, folder, code_record(snakemake)
        )
        return
    run_step(
        snakemake.log[0],
        train_and_evaluate,
        name,
        {"train": train, "heldout": Path(snakemake.input.heldout)},
        spec,
        CellOutputs(
            folder,
            Path(snakemake.output.metrics),
            Path(snakemake.output.frequencies),
            Path(snakemake.output.cost),
        ),
        code_record(snakemake),
        snakemake.params.training_code,
    )


def train_tokenizer_sizes(snakemake: Snakemake) -> None:
    """Every size of ``{tokenizer}`` on ``{language}`` in one job, one after the other
    (``train_sizes_together``): for each, what rule ``train_tokenizer`` does for a study
    cell (:func:`~tokstudy.workflow.cell_job.train_and_evaluate_sizes`).

    ``params.specs`` maps each size label to its training settings; the outputs
    ``tokenizers``, ``metrics``, ``frequencies`` and ``cost`` list each size's file in
    that order.
    """
    output = snakemake.output
    cells = {
        size: (
            TrainSpec(threads=snakemake.threads, **spec),
            CellOutputs(Path(folder), Path(metrics), Path(frequencies), Path(cost)),
        )
        for (size, spec), folder, metrics, frequencies, cost in zip(
            snakemake.params.specs.items(),
            output.tokenizers,
            output.metrics,
            output.frequencies,
            output.cost,
            strict=True,
        )
    }
    run_step(
        snakemake.log[0],
        train_and_evaluate_sizes,
        snakemake.wildcards.tokenizer,
        {"train": Path(snakemake.input.train), "heldout": Path(snakemake.input.heldout)},
        cells,
        code_record(snakemake),
        snakemake.params.training_code,
    )


def train_multilingual_tokenizer(snakemake: Snakemake) -> None:
    """One multilingual tokenizer on the mixed text: as rule ``train_tokenizer``."""
    train_tokenizer(snakemake)
