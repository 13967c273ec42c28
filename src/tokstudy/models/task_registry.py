"""The downstream tasks of the model stage: the one list every other module reads.

A :class:`Task` names what a task reads (its data inputs), the function that trains or
fine-tunes and scores it (a ``module:function`` path, imported only when a job runs, so
planning a study imports neither torch nor transformers), and the scores it reports with
their direction and whether they compare across tokenizers, and the planner of its files
(a ``module:Class`` of the workflow, a :class:`~tokstudy.workflow.models.task_planner.TaskPlanner`).
The settings (``models.tasks`` choices), the models planner (which builds each task's
planner), the rules (``models.smk``), the fine-tuning entry point
(``tasks.finetune_task``), the model families (``family.py``) and the correlation
analysis read this registry; adding a fine-tuning task is one module and one
:data:`TASKS` entry.

Kinds:

* ``evaluation`` scores the pretrained MLM on held-out text (``mlm``);
* ``modifier`` changes the other tasks' evaluation (``noise``: its function noises the
  test text they are also scored on);
* ``finetune`` fine-tunes the pretrained MLM with a ``head`` on every ``token`` or on the
  ``sequence`` (``pos``, ``sentence``);
* ``from_scratch`` trains its own model on the cell's training text (``clm``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KINDS = ("evaluation", "modifier", "finetune", "from_scratch")
HEADS = ("", "token", "sequence")


@dataclass(frozen=True)
class Score:
    """A metric a task reports: ``higher_is_better`` gives its direction;
    ``comparable_across_tokenizers`` says whether two tokenizers' values mean the same
    thing (bits per byte does; MLM pseudo-log-likelihood over each tokenizer's own
    pieces does not)."""

    metric: str
    higher_is_better: bool
    comparable_across_tokenizers: bool


@dataclass(frozen=True)
class Task:
    """One downstream task (see the module doc for ``kind`` and ``head``).

    ``inputs``: the data it reads beside the cell's model and tokenizer (``heldout``,
    ``train``: the cell's corpus splits; ``treebank``: a UD treebank; what a fine-tuning
    task may read instead of one: ``sentence_tsv``, a user TSV dataset, or ``silver_pos``,
    silver POS labels). ``run``: ``module:function`` of its training / scoring function (a
    modifier's: the function that modifies). ``plotted``: the metrics the noise plot shows
    of it (empty: every metric). ``note``: what a reader of its scores must know (shown
    beside them in the correlation tables), required when a score is not comparable across
    tokenizers. ``planner``: ``module:Class`` of the workflow planner of its files, which
    every kind but ``modifier`` has (a modifier changes the others' files).
    """

    name: str
    kind: str
    inputs: tuple[str, ...]
    run: str
    scores: tuple[Score, ...]
    planner: str = ""
    head: str = ""
    plotted: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.head not in HEADS:
            raise ValueError(f"task {self.name}: kind {self.kind!r} or head {self.head!r}")
        if bool(self.planner) == (self.kind == "modifier"):
            raise ValueError(f"task {self.name}: a {self.kind} task with planner {self.planner!r}")
        if not self.note and not all(s.comparable_across_tokenizers for s in self.scores):
            raise ValueError(
                f"task {self.name}: a score not comparable across tokenizers needs a note"
            )

    def function(self) -> Callable[..., Any]:
        """The task's training / scoring function (imported now)."""
        module, name = self.run.split(":")
        return getattr(importlib.import_module(module), name)

    def metrics(self) -> tuple[str, ...]:
        """The names of the scores it reports."""
        return tuple(score.metric for score in self.scores)


_CLASSIFICATION = (Score("accuracy", True, True), Score("macro_f1", True, True))
_FINETUNE_PLANNER = "tokstudy.workflow.models.finetune_plan:FinetunePlanner"

#: every task, by name (sorted by name)
TASKS: dict[str, Task] = {
    task.name: task
    for task in sorted(
        (
            Task(
                "clm",
                "from_scratch",
                ("train", "heldout"),
                "tokstudy.models.clm.train:train_clm",
                (
                    Score("bits_per_byte", False, True),
                    Score("unigram_bits_per_byte", False, True),
                ),
                planner="tokstudy.workflow.models.clm_plan:ClmPlanner",
                plotted=("bits_per_byte",),
            ),
            Task(
                "mlm",
                "evaluation",
                ("heldout",),
                "tokstudy.models.tasks:evaluate_mlm",
                (
                    Score("bits_per_char", False, False),
                    Score("pll_per_word", True, False),
                ),
                planner="tokstudy.workflow.models.mlm_plan:MlmPlanner",
                plotted=("pseudo_perplexity", "bits_per_char"),
                note=(
                    "pseudo-log-likelihood scores are not comparable across tokenizers: one "
                    "token is masked at a time, so a word cut into many pieces is predicted "
                    "from its own other pieces (Kauf & Ivanova 2023; PLL-word-l2r is their fix)"
                ),
            ),
            Task("noise", "modifier", (), "tokstudy.models.noise:noise_lines", ()),
            Task(
                "pos",
                "finetune",
                ("treebank", "silver_pos"),
                "tokstudy.models.tasks:finetune_pos",
                _CLASSIFICATION,
                planner=_FINETUNE_PLANNER,
                head="token",
            ),
            Task(
                "sentence",
                "finetune",
                ("treebank", "sentence_tsv"),
                "tokstudy.models.tasks:finetune_sentence",
                _CLASSIFICATION,
                planner=_FINETUNE_PLANNER,
                head="sequence",
            ),
        ),
        key=lambda task: task.name,
    )
}


def task_names() -> tuple[str, ...]:
    """Every task name (the choices of ``models.tasks``)."""
    return tuple(TASKS)


def tasks_of_kind(kind: str) -> tuple[str, ...]:
    """The names of the tasks of one kind."""
    return tuple(name for name, task in TASKS.items() if task.kind == kind)


def tasks_reading(data_input: str) -> tuple[str, ...]:
    """The names of the tasks that read ``data_input`` (e.g. ``treebank``)."""
    return tuple(name for name, task in TASKS.items() if data_input in task.inputs)


def scores() -> dict[str, tuple[Score, ...]]:
    """The scores each task reports (tasks without scores left out)."""
    return {name: task.scores for name, task in TASKS.items() if task.scores}
