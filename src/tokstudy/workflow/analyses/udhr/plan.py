"""The planner of ``analyses.parity.udhr``: tokenization premiums over a reference
translation of the Universal Declaration of Human Rights."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokstudy.corpora.udhr import (
    EVERY_TRANSLATION,
    INDEX_FILE,
    read_index,
    select_codes,
    translation_file,
    translations_of,
    udhr_coverage,
)
from tokstudy.errors import TokstudyError
from tokstudy.workflow.analyses.base import AnalysisPlanner, ParityTokenizer
from tokstudy.workflow.analyses.parity.plan import (
    PARITY_KEY,
    multilingual_entry,
    trained_entry,
)
from tokstudy.workflow.study.paths import expand


class UdhrPlanner(AnalysisPlanner):
    """``analyses.parity.udhr``: the UDHR folder, the translations compared, the
    tokenizers that take part, the tables and plots."""

    PARITY_UDHR = "tables/analysis/parity_udhr.{ext}"
    PARITY_UDHR_FAIRNESS = "tables/analysis/parity_udhr_fairness.{ext}"
    PARITY_UDHR_SCRIPTS = "tables/analysis/parity_udhr_scripts.{ext}"
    PARITY_UDHR_PLOT = "plots/analysis/parity_udhr_{plot}.{ext}"
    #: the plots of the UDHR parity (rule plot_parity_udhr)
    plots = ("map", "curves", "scripts")

    def udhr(self) -> dict[str, Any]:
        """``analyses.parity.udhr`` (empty without)."""
        return (self.section.get("parity") or {}).get("udhr") or {}

    def root(self) -> Path | None:
        """The UDHR folder (relative to the base folder), or ``None`` without."""
        section = self.udhr()
        if not section:
            return None
        root = Path(section["root"])
        return root if root.is_absolute() else self.study.base / root

    def reference(self) -> str | None:
        """The translation every other is compared with (``None`` without)."""
        return self.udhr().get("reference")

    def index(self) -> str | None:
        """The UDHR folder's ``index.tsv`` (``None`` without)."""
        root = self.root()
        return None if root is None else str(root / INDEX_FILE)

    def files(self) -> dict[str, str]:
        """HTML file of each translation compared, by code (sorted): the reference and
        ``languages`` (file or ISO 639-3 codes), or every translation; empty without."""
        root = self.root()
        if root is None:
            return {}
        key = f"{PARITY_KEY}.udhr"
        codes = select_codes(read_index(root), self.udhr().get("languages"), self.reference(), key)
        return {code: str(translation_file(root, code)) for code in codes}

    def article_one_files(self) -> dict[str, str]:
        """For the study page: the HTML file of each study language's first UDHR
        translation among those compared (its article 1 is shown), by language; empty
        without a UDHR parity."""
        root, files = self.root(), self.files()
        if root is None:
            return {}
        index = read_index(root)
        chosen = {}
        for language in self.study.languages:
            codes = [code for code in translations_of(index, language) if code in files]
            if codes:
                chosen[language] = files[codes[0]]
        return chosen

    def tokenizers_scored(self) -> list[ParityTokenizer]:
        """Every tokenizer of the study, for the UDHR parity: a tokenizer trained per
        language with that language, a multilingual one with its languages, a pretrained
        one with every translation (:data:`~tokstudy.corpora.udhr.EVERY_TRANSLATION`).
        The step finds their translations and records who is left out; empty without."""
        if self.root() is None:
            return []
        tokenizers = self.tokenizers
        entries = [trained_entry(tokenizers, j) for j in tokenizers.cells()]
        multilingual = self.plan.analyses["multilingual"]
        languages = tuple(multilingual.languages())
        entries += [multilingual_entry(tokenizers, j, languages) for j in multilingual.cells()]
        entries += [
            ParityTokenizer(name, "pretrained", tokenizers.pretrained_dir(name), EVERY_TRANSLATION)
            for name in tokenizers.pretrained_names()
        ]
        return entries

    def tokenizer_dirs(self) -> list[str]:
        """The directories of the tokenizers that take part (the rule's inputs), sorted."""
        root = self.root()
        if root is None:
            return []
        coverage = udhr_coverage(
            [vars(entry) for entry in self.tokenizers_scored()],
            read_index(root),
            list(self.files()),
            self.reference(),
            {"skipped_tokenizers": {}},
        )
        return sorted({str(path) for group in coverage.values() for path in group.values()})

    def targets(self) -> list[str]:
        """The UDHR parity's tables and plots (none without)."""
        if self.root() is None:
            return []
        tables = [self.PARITY_UDHR, self.PARITY_UDHR_FAIRNESS, self.PARITY_UDHR_SCRIPTS]
        patterns = [
            *[path for pattern in tables for path in expand(pattern, ext=["csv", "md"])],
            *expand(self.PARITY_UDHR_PLOT, plot=list(self.plots), ext=["png", "pdf"]),
        ]
        return [self.study.out(pattern) for pattern in patterns]

    def check(self) -> None:
        """A bad UDHR folder, reference or ``languages`` code, or no tokenizer covering the
        reference and another translation, stops the study at start (one line)."""
        root = self.root()
        if root is None:
            return
        if not root.is_dir():
            raise TokstudyError(f"{PARITY_KEY}.udhr.root: no folder {root}")
        self.tokenizer_dirs()
