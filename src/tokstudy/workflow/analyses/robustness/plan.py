"""The planner of ``analyses.robustness``: how every tokenizer's segmentation changes under
seeded perturbations of the PUD sentences and of the study's held-out text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokstudy.analyses.robustness.perturbations import PERTURBATIONS, check_names
from tokstudy.corpora.ud import pud_treebanks
from tokstudy.errors import TokstudyError
from tokstudy.workflow.analyses.base import AnalysisPlanner, ParityTokenizer
from tokstudy.workflow.analyses.parity.plan import tokenizers_reaching
from tokstudy.workflow.corpora.plan import CorporaPlanner
from tokstudy.workflow.study.paths import expand

KEY = "config key analyses.robustness"


class RobustnessPlanner(AnalysisPlanner):
    """``analyses.robustness``: ``perturbations``, ``sentences``, ``rate``, ``pud_root``."""

    ROBUSTNESS = "tables/analysis/robustness.{ext}"
    ROBUSTNESS_PLOT = "plots/analysis/robustness_heatmap.{ext}"

    @property
    def settings(self) -> dict[str, Any]:
        """The ``analyses.robustness`` section (empty without)."""
        return self.section.get("robustness") or {}

    def perturbations(self) -> list[str]:
        """The perturbations run (all without ``perturbations``)."""
        return list(self.settings.get("perturbations", PERTURBATIONS))

    def pud_files(self) -> dict[str, str]:
        """Language → PUD file (none without ``pud_root``)."""
        if "pud_root" not in self.settings:
            return {}
        root = Path(self.settings["pud_root"])
        folder = root if root.is_absolute() else self.study.base / root
        if not folder.is_dir():
            raise TokstudyError(f"{KEY}.pud_root: no folder {folder}")
        return {language: str(path) for language, path in sorted(pud_treebanks(folder).items())}

    def heldout_files(self) -> dict[str, str]:
        """Language → the study's held-out text (with the section)."""
        if not self.settings:
            return {}
        return {
            language: self.study.out(CorporaPlanner.HELDOUT, language=language)
            for language in sorted(self.study.languages)
        }

    def tokenizers_scored(self) -> list[ParityTokenizer]:
        """Trained cells on their language, pretrained ones on every language of a text."""
        return tokenizers_reaching(self.tokenizers, {*self.pud_files(), *self.heldout_files()})

    def check(self) -> None:
        """Known perturbation names and an existing ``pud_root``."""
        check_names(self.perturbations(), f"{KEY}.perturbations")
        self.pud_files()

    def targets(self) -> list[str]:
        """The table (CSV, Markdown) and the heat map."""
        on = bool(self.settings)
        patterns = [
            *expand(self.ROBUSTNESS, ext=["csv", "md"] if on else []),
            *expand(self.ROBUSTNESS_PLOT, ext=["png", "pdf"] if on else []),
        ]
        return [self.study.out(pattern) for pattern in patterns]
