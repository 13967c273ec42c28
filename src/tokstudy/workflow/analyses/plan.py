"""The analyses of a study: the planner of every analysis in :data:`ANALYSES`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tokstudy.workflow.analyses.base import AnalysisPlanner, Plan
from tokstudy.workflow.analyses.registry import ANALYSES


class AnalysesPlan(Mapping[str, AnalysisPlanner]):
    """Name → the planner of each registered analysis, built in registry order and then
    checked (so a planner's checks may read another analysis's planner)."""

    def __init__(self, plan: Plan) -> None:
        self._planners: dict[str, AnalysisPlanner] = {}
        for name, analysis in ANALYSES.items():
            self._planners[name] = analysis.planner(plan)

    def check(self) -> None:
        """Every analysis's cross-key checks, in registry order."""
        for planner in self._planners.values():
            planner.check()

    def __getitem__(self, name: str) -> AnalysisPlanner:
        return self._planners[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._planners)

    def __len__(self) -> int:
        return len(self._planners)

    def targets(self) -> list[str]:
        """The tables and plots of every analysis the study asks for, in registry order."""
        return [path for planner in self._planners.values() for path in planner.targets()]

    def cost_sources(self) -> list[dict[str, Any]]:
        """The cost table's rows of every analysis (the multilingual tokenizers')."""
        return [row for planner in self._planners.values() for row in planner.cost_sources()]
