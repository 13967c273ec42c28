"""The planner of ``analyses.segmentation``: one table per language of side-by-side
segmentations of a word list."""

from __future__ import annotations

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, PRETRAINED, Cell
from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.study.paths import expand


class SegmentationPlanner(AnalysisPlanner):
    """``analyses.segmentation``: the words, the size shown and the tables."""

    SEGMENTATION = "tables/analysis/segmentation_{language}.{ext}"

    def _words(self) -> dict[str, list[str]]:
        return (self.section.get("segmentation") or {}).get("words") or {}

    def check(self) -> None:
        """Each language of the word lists is a study language with words."""
        for language, word_list in sorted(self._words().items()):
            if language not in self.study.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.segmentation.words.{language}: not in languages"
                )
            if not word_list:
                raise TokstudyError(f"config key analyses.segmentation.words.{language} is empty")

    def languages(self) -> list[str]:
        """Languages with a word list for the segmentation table."""
        return sorted(lang for lang in self._words() if lang in self.study.config["languages"])

    def cells(self, language: str) -> list[Cell]:
        """Cells shown in a language's segmentation table: the chosen size, plus unsized and
        pretrained ones."""
        size = str((self.section.get("segmentation") or {}).get("vocab_size", ""))
        return [
            j
            for j in self.tokenizers.scored_cells()
            if j.language == language and j.size in (size, FULL_SIZE_LABEL, PRETRAINED)
        ]

    def words(self, language: str) -> list[str]:
        """The words whose segmentations a language's table shows."""
        return self._words()[language]

    def targets(self) -> list[str]:
        """The table of each language with a word list (CSV and Markdown)."""
        patterns = expand(self.SEGMENTATION, language=self.languages(), ext=["csv", "md"])
        return [self.study.out(pattern) for pattern in patterns]
