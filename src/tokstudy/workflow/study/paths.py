"""Path patterns of the planners: relative to the study's ``results_dir``, with Snakemake
``{wildcard}`` placeholders; each planner owns the patterns of the files its section
produces (class attributes), and these helpers fill them in."""

from __future__ import annotations

from typing import Any

#: the cell of a trained tokenizer, and of everything computed per tokenizer
CELL = "{language}/{tokenizer}/{size}"


def fill(pattern: str, **values: Any) -> str:
    """``pattern`` with the placeholders named in ``values`` filled in (others kept)."""
    for key, value in values.items():
        pattern = pattern.replace(f"{{{key}}}", str(value))
    return pattern


def expand(pattern: str, **values: Any) -> list[str]:
    """``pattern`` filled with every combination of ``values`` (first key slowest)."""
    paths = [pattern]
    for key, options in values.items():
        paths = [fill(path, **{key: option}) for path in paths for option in options]
    return paths


def log_path(rule: str, cell: str | None = None) -> str:
    """The log of a rule's job: ``logs/<rule>/<cell>.log``, or ``logs/<rule>.log`` for a
    rule with one job."""
    return f"logs/{rule}/{cell}.log" if cell else f"logs/{rule}.log"


#: the folder of the training jobs' checkpoints, under the results folder
CHECKPOINTS = "checkpoints"


def checkpoint_path(rule: str, run: str) -> str:
    """The checkpoint root of a training job whose run folder is the pattern ``run``:
    ``checkpoints/<rule>/<run>`` (the run's checkpoint lives in a folder named after its
    settings fingerprint under it). The one place outside its declared outputs a job
    writes, so Snakemake never deletes a checkpoint; the job keeps its outputs there in
    place of the checkpoint when it succeeds, and the workflow removes them once Snakemake
    has recorded the job (:mod:`tokstudy.workflow.training_state`)."""
    return f"{CHECKPOINTS}/{rule}/{run}"


def benchmark_path(rule: str, cell: str) -> str:
    """The Snakemake benchmark file of a rule's job (time and peak memory)."""
    return f"benchmarks/{rule}/{cell}.tsv"
