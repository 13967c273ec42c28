"""What every analysis planner has: the plan it reads, its checks and its targets; and
:class:`ParityTokenizer`, the tokenizer of the analyses that score tokenizers over several
languages (parity, UDHR, MorphScore, robustness, numbers).

An analysis planner is built with the study's plan (:class:`Plan`: the study and the
stage planners; the other analyses' planners under ``analyses``), then checked once every
analysis has its planner (:meth:`AnalysisPlanner.check`), so that one analysis may read
another (the parities read the multilingual tokenizers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tokstudy.workflow.metrics.plan import MetricsPlanner
    from tokstudy.workflow.models.plan import ModelsPlanner
    from tokstudy.workflow.nmt.plan import NMTPlanner
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


@dataclass(frozen=True)
class ParityTokenizer:
    """A tokenizer of the multi-parallel parity analysis: ``directory`` serves ``languages``.

    ``label`` names the tokenizer in the tables; a tokenizer trained per language has one
    entry per language under one label (``sp_bpe 1000``), a multilingual one a single
    entry for all its languages. ``kind``: ``trained`` or ``multilingual``.
    """

    label: str
    kind: str
    directory: str
    languages: tuple[str, ...]


class Plan(Protocol):
    """What an analysis planner reads of the study's plan."""

    study: Study
    tokenizers: TokenizersPlanner
    metrics: MetricsPlanner
    models: ModelsPlanner
    nmt: NMTPlanner

    @property
    def analyses(self) -> Mapping[str, AnalysisPlanner]:
        """The planner of every analysis, by name."""
        ...


class AnalysisPlanner:
    """One analysis: its settings from the study, the path pattern of each file it
    writes (class attributes), its checks and ``targets()``."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.study = plan.study
        self.tokenizers = plan.tokenizers

    @property
    def section(self) -> dict[str, Any]:
        """The ``analyses`` section (empty when absent)."""
        return self.study.config.get("analyses") or {}

    def check(self) -> None:
        """Cross-key checks (one-line errors naming the key); none by default."""

    def targets(self) -> list[str]:
        """The files the analysis produces for ``rule all`` (none when it does not run)."""
        return []

    def cost_sources(self) -> list[dict[str, Any]]:
        """Rows the analysis adds to the cost table (none by default)."""
        return []
