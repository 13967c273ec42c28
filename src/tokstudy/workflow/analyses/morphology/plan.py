"""The planner of ``analyses.ud_root``: the morphological alignment of every scored
tokenizer with UD lemmas."""

from __future__ import annotations

from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.study.paths import expand


class MorphologyPlanner(AnalysisPlanner):
    """``analyses.ud_root``: the UD folder and the alignment table."""

    MORPHOLOGICAL_ALIGNMENT = "tables/analysis/morphological_alignment.{ext}"

    @property
    def ud_root(self) -> str | None:
        """The folder of the UD treebanks (``None``: the analysis does not run)."""
        return self.section.get("ud_root")

    def targets(self) -> list[str]:
        """The alignment table (CSV and Markdown), with a UD folder."""
        patterns = expand(self.MORPHOLOGICAL_ALIGNMENT, ext=["csv", "md"] if self.ud_root else [])
        return [self.study.out(pattern) for pattern in patterns]
