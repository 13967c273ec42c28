"""The planner of ``analyses.numbers``: how every tokenizer of the study cuts numbers,
generated ones and those of the PUD sentences and the UDHR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokstudy.corpora.ud import pud_treebanks
from tokstudy.errors import TokstudyError
from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.analyses.parity.plan import tokenizers_reaching
from tokstudy.workflow.study.paths import expand

KEY = "config key analyses.numbers"


class NumbersPlanner(AnalysisPlanner):
    """``analyses.numbers``: ``per_length``, and the optional ``pud_root``, ``udhr_root``."""

    NUMBERS = "tables/analysis/numbers.{ext}"
    NUMBERS_PLOT = "plots/analysis/numbers_tokens.{ext}"

    @property
    def settings(self) -> dict[str, Any]:
        """The ``analyses.numbers`` section (empty without)."""
        return self.section.get("numbers") or {}

    def _folder(self, key: str) -> Path | None:
        if key not in self.settings:
            return None
        root = Path(self.settings[key])
        folder = root if root.is_absolute() else self.study.base / root
        if not folder.is_dir():
            raise TokstudyError(f"{KEY}.{key}: no folder {folder}")
        return folder

    def pud_files(self) -> list[str]:
        """The PUD CoNLL-U files whose sentences' numbers are scored (none without)."""
        folder = self._folder("pud_root")
        return [str(path) for _, path in sorted(pud_treebanks(folder).items())] if folder else []

    def udhr_files(self) -> list[str]:
        """The UDHR translations whose numbers are scored (none without ``udhr_root``)."""
        folder = self._folder("udhr_root")
        return [str(p) for p in sorted((folder / "declaration").glob("*.html"))] if folder else []

    def tokenizers_scored(self) -> list[dict[str, Any]]:
        """Every trained cell (labelled with its language) and pretrained tokenizer."""
        entries = []
        for entry in tokenizers_reaching(self.tokenizers, self.study.languages):
            label = entry.label
            if entry.kind == "trained":
                label = f"{label} ({entry.languages[0]})"
            entries.append({"label": label, "kind": entry.kind, "directory": entry.directory})
        return entries

    def check(self) -> None:
        """The folders exist (read once here)."""
        self.pud_files()
        self.udhr_files()

    def targets(self) -> list[str]:
        """The table (CSV, Markdown) and the plot of tokens per number."""
        on = bool(self.settings)
        patterns = [
            *expand(self.NUMBERS, ext=["csv", "md"] if on else []),
            *expand(self.NUMBERS_PLOT, ext=["png", "pdf"] if on else []),
        ]
        return [self.study.out(pattern) for pattern in patterns]
