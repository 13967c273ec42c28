"""The planner of ``analyses.correlation``: intrinsic metrics of every cell against its
downstream scores (``models:`` and ``nmt:``)."""

from __future__ import annotations

from typing import Any

from tokstudy.analyses.correlation.settings import NMT_SIDES, CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import CORPUS_SPLITS
from tokstudy.training.config import from_mapping
from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.nmt.plan import NMTPlanner
from tokstudy.workflow.study.paths import expand


class CorrelationPlanner(AnalysisPlanner):
    """``analyses.correlation``: on by default whenever the study has a downstream stage."""

    CORRELATION = "tables/analysis/correlation.{ext}"
    CORRELATION_RANKING = "tables/analysis/correlation_ranking.{ext}"
    CORRELATION_PLOT = "plots/analysis/correlation.png"
    #: the per-seed cells table the correlation reads (csv) and what it left out (json)
    CORRELATION_CELLS = "tables/analysis/correlation_cells.{ext}"
    CORRELATION_MIXED = "tables/analysis/correlation_mixed.{ext}"
    #: the associations within and across tokenizer families
    CORRELATION_FAMILY = "tables/analysis/correlation_family.{ext}"
    #: the declared primary metric against each other one
    CORRELATION_COMPARISON = "tables/analysis/correlation_comparison.{ext}"
    #: every verdict with and without flagged runs
    CORRELATION_SENSITIVITY = "tables/analysis/correlation_sensitivity.{ext}"

    def _downstream(self) -> bool:
        return bool({"models", "nmt"} & set(self.study.config))

    def check(self) -> None:
        """Settings given for the correlation need a downstream stage and are checked here,
        once (the rule's job rebuilds them unchecked); a primary metric must be one of the
        study's intrinsic columns (``{metric}_{split}``)."""
        if self.section.get("correlation") not in (None, False) and not self._downstream():
            raise TokstudyError(
                "config key analyses.correlation: the study has no downstream stage "
                "(a models: or nmt: section) to correlate intrinsic metrics with"
            )
        if self.settings() is not None:
            from_mapping(CorrelationSettings, self.resampling(), "config key analyses.correlation")
        primary = (self.settings() or {}).get("primary", "")
        columns = [f"{m}_{split}" for m in self.plan.metrics.names for split in CORPUS_SPLITS]
        if primary and primary not in columns:
            raise TokstudyError(
                f"config key analyses.correlation.primary: {primary!r} is not a metric of "
                f"the study with its split; valid choices: {', '.join(columns)}"
            )

    def settings(self) -> dict[str, Any] | None:
        """Settings of the correlation analysis, or ``None`` when it does not run.

        On by default whenever the study has a downstream stage (``models:`` or ``nmt:``):
        ``analyses.correlation`` absent or ``true`` → default settings, a mapping → those
        settings, ``false`` → off.
        """
        section = self.section.get("correlation", True)
        if section is False or not self._downstream():
            return None
        return {} if section is True else dict(section)

    def resampling(self) -> dict[str, Any]:
        """What the correlation rule resamples with: the study's seed and the section."""
        return {"seed": self.study.seed, **(self.settings() or {})}

    @property
    def nmt_side(self) -> str:
        """The NMT side whose tokenizers' metrics the NMT cells take."""
        return (self.settings() or {}).get("nmt_side", CorrelationSettings.nmt_side)

    def nmt_metric_sides(self) -> dict[str, str]:
        """Direction → the side (language) whose NMT tokenizer gives the cells' intrinsic
        metrics; empty for joint vocabularies (one tokenizer for both languages: no
        per-language metrics, so NMT cells are not correlated)."""
        nmt = self.plan.nmt
        if nmt.nmt is None or nmt.config.joint:
            return {}
        index = NMT_SIDES.index(self.nmt_side)
        return {direction: nmt.sides(direction)[1 - index] for direction in nmt.config.directions}

    def nmt_metric_files(self) -> list[str]:
        """The metric files of the NMT tokenizers the correlation needs, sorted."""
        sides = self.nmt_metric_sides()
        return sorted(
            {
                self.study.out(
                    NMTPlanner.TOKENIZER_METRICS,
                    side=sides[run.direction],
                    tokenizer=run.tokenizer,
                    size=run.size,
                )
                for run in self.plan.nmt.runs()
                if run.direction in sides
            }
        )

    def targets(self) -> list[str]:
        """The correlation tables and plot (none when the analysis does not run)."""
        if self.settings() is None:
            return []
        patterns = [
            *expand(self.CORRELATION, ext=["csv", "md"]),
            *expand(self.CORRELATION_RANKING, ext=["csv", "md"]),
            self.CORRELATION_PLOT,
            *expand(self.CORRELATION_CELLS, ext=["csv", "json"]),
            *expand(self.CORRELATION_MIXED, ext=["csv", "md"]),
            *expand(self.CORRELATION_FAMILY, ext=["csv", "md"]),
            *expand(self.CORRELATION_COMPARISON, ext=["csv", "md"]),
            *expand(self.CORRELATION_SENSITIVITY, ext=["csv", "md"]),
        ]
        return [self.study.out(pattern) for pattern in patterns]
