"""The planner of the ``models:`` section: the shared section (:mod:`.section`), the
planner each task's registry entry names (:mod:`.task_planner`) and the summary of them
all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokstudy.models.task_registry import KINDS, TASKS
from tokstudy.workflow.models.section import ModelsSection
from tokstudy.workflow.models.task_planner import TaskPlanner, task_planners
from tokstudy.workflow.study.paths import expand

if TYPE_CHECKING:
    from tokstudy.tokenizers.cells import Cell
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


class ModelsPlanner:
    """The ``models:`` section of a study resolved into rule inputs (empty without it):
    ``section`` (settings, checks, cells, runs), the planner of each task
    (:meth:`planner`), and the tables that ``summarize_models`` writes of them."""

    RESULTS_TABLE = "tables/models/results.tsv"
    SUMMARY_TABLE = "tables/models/{table}.{ext}"
    NOISE_PLOT = "plots/models/noise.{ext}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.section = ModelsSection(study, tokenizers)
        self._planners = task_planners(self.section)
        ordered = sorted(self._planners, key=lambda task: KINDS.index(TASKS[task].kind))
        self._distinct = list({id(self._planners[t]): self._planners[t] for t in ordered}.values())

    def planner(self, task: str) -> Any:
        """The planner of a task (a name of the task registry that has one)."""
        return self._planners[task]

    def kind_planner(self, kind: str) -> Any:
        """The planner of every task of a kind (e.g. ``finetune``: they share one)."""
        planners = {id(p): p for t, p in self._planners.items() if TASKS[t].kind == kind}
        if len(planners) != 1:
            raise ValueError(f"the {kind} tasks have {len(planners)} planners: the rules need one")
        return next(iter(planners.values()))

    def planners(self) -> list[TaskPlanner]:
        """Every task planner once, in the order of their tasks' kinds (``KINDS``)."""
        return list(self._distinct)

    def score_files(self) -> dict[str, dict[str, Any]]:
        """Every task's score files with their keys: the rows of the results table."""
        return {
            path: keys
            for planner in self.planners()
            for path, keys in planner.score_files().items()
        }

    def summary_tables(self) -> list[str]:
        """Names of the statistics tables the summary writes."""
        tables = ["seed_summary", "wilcoxon", "flagged_runs"]
        return tables + [table for planner in self.planners() for table in planner.summary_tables()]

    def rules(self) -> list[str]:
        """The rules the study's model runs use (none without the section)."""
        return list(dict.fromkeys(rule for planner in self.planners() for rule in planner.rules()))

    def gpu_sections(self) -> dict[str, tuple[list[Any], str]]:
        """Every task planner's training rules with their settings sections and key."""
        return {
            rule: item
            for planner in self.planners()
            for rule, item in planner.gpu_sections().items()
        }

    def cell_model_priority(self, cell: Cell) -> int:
        """The highest priority the cell's models give the jobs they wait for (0: none)."""
        return max(planner.cell_model_priority(cell) for planner in self.planners())

    def targets(self) -> list[str]:
        """What ``summarize_models`` writes: results, statistics tables and the noise plot
        (nothing without the section)."""
        if self.section.models is None:
            return []
        patterns = [
            self.RESULTS_TABLE,
            *expand(self.SUMMARY_TABLE, table=self.summary_tables(), ext=["tsv", "md"]),
            *expand(self.NOISE_PLOT, ext=["png", "pdf"]),
        ]
        return [self.section.study.out(pattern) for pattern in patterns]
