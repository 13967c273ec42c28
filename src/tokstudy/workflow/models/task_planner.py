"""What the models planner asks of the planner of a kind of task.

Each task's registry entry names its planner (``Task.planner``); the models planner
builds one of each, handing it the tasks that name it, and asks them all the same
questions: which of their tasks the study asks for, their score files, the summary
tables they add, the rules their runs use, the GPUs their training rules take and their
cells' priority. So no code outside a task's own planner and rules names a task."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tokstudy.models.task_registry import TASKS

if TYPE_CHECKING:
    from tokstudy.tokenizers.cells import Cell
    from tokstudy.workflow.models.section import ModelsSection


class TaskPlanner:
    """The planner of some tasks (``served``: the registry's tasks that name it); the
    defaults are those of a task that adds no table, rule, GPU or priority."""

    def __init__(self, section: ModelsSection, served: tuple[str, ...]) -> None:
        self.section = section
        self.served = served

    def asked(self) -> list[str]:
        """The tasks it plans that the models section asks for."""
        return [task for task in self.served if self.section.has_task(task)]

    def score_files(self) -> dict[str, dict[str, Any]]:
        """The score file of every run of its asked tasks, with the keys the results table
        gives it (``task`` among them)."""
        return {}

    def summary_tables(self) -> list[str]:
        """Names of the tables ``summarize_models`` writes of its tasks."""
        return []

    def rules(self) -> tuple[str, ...]:
        """The rules the study's runs of its tasks use."""
        return ()

    def gpu_sections(self) -> dict[str, tuple[list[Any], str]]:
        """Per training rule: the settings sections of its jobs (each with ``device`` and
        ``devices``) and the config key that sets their ``devices``."""
        return {}

    def cell_model_priority(self, cell: Cell) -> int:
        """The priority its models give the jobs a cell's models wait for (0: none)."""
        del cell
        return 0


def task_planners(section: ModelsSection) -> dict[str, TaskPlanner]:
    """One planner of each kind the registry names, by task (tasks without a planner, the
    modifiers, left out); a planner shared by several tasks is one object."""
    served: dict[str, list[str]] = {}
    for name, task in TASKS.items():
        if task.planner:
            served.setdefault(task.planner, []).append(name)
    planners = {}
    for path, tasks in served.items():
        module, name = path.split(":")
        planner = getattr(importlib.import_module(module), name)(section, tuple(tasks))
        planners |= dict.fromkeys(tasks, planner)
    return planners
