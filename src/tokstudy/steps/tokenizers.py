"""Steps of ``workflow/rules/tokenizers.smk``: train one tokenizer of the study.

:func:`train_tokenizer` is also what the multilingual and NMT tokenizer rules run
(:func:`tokstudy.steps.analysis.train_multilingual_tokenizer`,
:func:`tokstudy.steps.nmt.nmt_train_tokenizer`): the same input ``train``, one output
folder and the ``spec`` parameter.
"""

from __future__ import annotations

from pathlib import Path

from tokstudy.steps import Snakemake
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.io import train_to_directory
from tokstudy.workflow_step import run_step


def train_tokenizer(snakemake: Snakemake) -> None:
    """Train tokenizer ``{tokenizer}`` on the text ``train`` into the output folder.

    ``params.spec`` holds the :class:`~tokstudy.tokenizers.base.TrainSpec` fields but
    ``threads``, which are the job's.
    """
    run_step(
        snakemake.log[0],
        train_to_directory,
        snakemake.wildcards.tokenizer,
        Path(snakemake.input.train),
        TrainSpec(threads=snakemake.threads, **snakemake.params.spec),
        Path(snakemake.output[0]),
    )
