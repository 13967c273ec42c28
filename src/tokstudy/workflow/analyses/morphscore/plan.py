"""The planner of ``analyses.morphscore``: MorphScore-style alignment of every scored
tokenizer on every UD treebank with lemmas under ``ud_root``."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from tokstudy.corpora.ud import treebank_files
from tokstudy.errors import TokstudyError
from tokstudy.workflow.analyses.base import AnalysisPlanner, ParityTokenizer
from tokstudy.workflow.analyses.parity.plan import tokenizers_reaching
from tokstudy.workflow.study.paths import expand

KEY = "config key analyses.morphscore"
#: ``en_ewt-ud-dev.conllu.gz`` → ``en``
UD_FILE = re.compile(r"(?P<code>[a-z]{2,3})_[a-z0-9]+-ud-[a-z]+\.conllu(?:\.gz)?")


def language_treebanks(ud_root: Path) -> dict[str, list[Path]]:
    """Language code → its ``UD_*`` folders under ``ud_root`` (codes from the CoNLL-U
    file names), sorted."""
    found: dict[str, list[Path]] = {}
    for folder in sorted(Path(ud_root).glob("UD_*")):
        codes = {m["code"] for f in treebank_files(folder) if (m := UD_FILE.fullmatch(f.name))}
        for code in sorted(codes):
            found.setdefault(code, []).append(folder)
    return found


class MorphScorePlanner(AnalysisPlanner):
    """``analyses.morphscore``: ``ud_root`` and optionally ``languages``."""

    MORPHSCORE = "tables/analysis/morphscore.{ext}"
    MORPHSCORE_PLOT = "plots/analysis/morphscore_heatmap.{ext}"

    @property
    def settings(self) -> dict[str, Any]:
        """The ``analyses.morphscore`` section (empty without)."""
        return self.section.get("morphscore") or {}

    def treebanks(self) -> dict[str, list[Path]]:
        """Language → treebank folders, for the languages scored (empty without the
        section); every language of ``languages`` must have one."""
        if not self.settings:
            return {}
        root = Path(self.settings["ud_root"])
        folder = root if root.is_absolute() else self.study.base / root
        if not folder.is_dir():
            raise TokstudyError(f"{KEY}.ud_root: no folder {folder}")
        found = language_treebanks(folder)
        wanted = self.settings.get("languages", sorted(found))
        for language in wanted:
            if language not in found:
                close = difflib.get_close_matches(language, sorted(found), n=3, cutoff=0.0)
                raise TokstudyError(
                    f"{KEY}.languages: no UD treebank under {root} covers {language!r} "
                    f"(closest codes: {', '.join(close) or 'none'})"
                )
        return {language: found[language] for language in sorted(wanted)}

    def uncovered(self) -> dict[str, list[str]]:
        """Study language without a treebank → the three closest treebank codes (its
        trained tokenizers are not scored; the step logs one line each)."""
        if not self.settings:
            return {}
        codes = sorted(self.treebanks())
        return {
            language: difflib.get_close_matches(language, codes, n=3, cutoff=0.0)
            for language in sorted(self.study.languages)
            if language not in codes
        }

    def tokenizers_scored(self) -> list[ParityTokenizer]:
        """Trained cells of the treebanks' languages and the pretrained tokenizers."""
        return tokenizers_reaching(self.tokenizers, self.treebanks())

    def check(self) -> None:
        """The languages have treebanks (``treebanks``) and some tokenizer covers one."""
        if self.settings and not self.tokenizers_scored():
            raise TokstudyError(
                f"{KEY}: no tokenizer of the study covers a language of the treebanks "
                f"({', '.join(self.treebanks())})"
            )

    def targets(self) -> list[str]:
        """The table (CSV, Markdown, JSON notes) and the heat map."""
        on = bool(self.settings)
        patterns = [
            *expand(self.MORPHSCORE, ext=["csv", "md", "json"] if on else []),
            *expand(self.MORPHSCORE_PLOT, ext=["png", "pdf"] if on else []),
        ]
        return [self.study.out(pattern) for pattern in patterns]
