"""The planner of ``analyses.parity``: tokenization parity on the line-aligned held-out
text of two languages, and premiums on a multi-parallel corpus (PUD)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tokstudy.corpora.ud import pud_treebanks
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, Cell
from tokstudy.workflow.analyses.base import AnalysisPlanner, ParityTokenizer
from tokstudy.workflow.corpora.plan import CorporaPlanner
from tokstudy.workflow.study.paths import expand
from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

PARITY_KEY = "config key analyses.parity"


def trained_entry(tokenizers: TokenizersPlanner, job: Cell) -> ParityTokenizer:
    """A tokenizer trained per language, for a parity: it covers its language."""
    name = job.tokenizer if job.size == FULL_SIZE_LABEL else f"{job.tokenizer} {job.size}"
    return ParityTokenizer(name, "trained", tokenizers.tokenizer_dir(job), (job.language,))


def multilingual_entry(
    tokenizers: TokenizersPlanner, job: Cell, languages: tuple[str, ...]
) -> ParityTokenizer:
    """A multilingual tokenizer, for a parity, covering ``languages``."""
    return ParityTokenizer(
        f"{job.tokenizer} {job.size} ({job.language})",
        "multilingual",
        tokenizers.study.out(TokenizersPlanner.MULTILINGUAL_TOKENIZER, **job.wildcards()),
        languages,
    )


def tokenizers_reaching(
    tokenizers: TokenizersPlanner, languages: Iterable[str]
) -> list[ParityTokenizer]:
    """Trained cells of ``languages`` (each on its language), then the pretrained
    tokenizers with the languages of ``languages`` they cover (all, or those of their
    ``languages`` list); one covering none is left out. The analyses that score every
    tokenizer language by language (``morphscore``, ``robustness``, ``numbers``) read it."""
    wanted = set(languages)
    entries = [trained_entry(tokenizers, j) for j in tokenizers.cells() if j.language in wanted]
    for name in tokenizers.pretrained_names():
        listed = tokenizers.pretrained[name].get("languages")
        reach = tuple(sorted(wanted & set(listed))) if listed else tuple(sorted(wanted))
        if reach:
            entries.append(
                ParityTokenizer(name, "pretrained", tokenizers.pretrained_dir(name), reach)
            )
    return entries


class ParityPlanner(AnalysisPlanner):
    """``analyses.parity``: the line-aligned parity (``reference``, ``target``) and the
    multi-parallel one (``pud_root``, ``languages``)."""

    PARITY = "tables/analysis/parity.{ext}"
    PARITY_PUD = "tables/analysis/parity_pud.{ext}"
    PARITY_PUD_FAIRNESS = "tables/analysis/parity_pud_fairness.{ext}"
    PARITY_PUD_PLOT = "plots/analysis/parity_pud_{plot}.{ext}"

    @property
    def parity(self) -> dict[str, Any]:
        """The ``analyses.parity`` section (empty without)."""
        return self.section.get("parity") or {}

    def language(self, role: str) -> str | None:
        """The ``reference`` or ``target`` language of the parity analysis (``None`` without)."""
        return self.parity.get(role)

    def texts(self) -> dict[str, str]:
        """``reference_text`` and ``target_text``: the held-out corpora the line-aligned
        parity compares (none without ``analyses.parity.target``)."""
        if not self.language("target"):
            return {}
        return {
            f"{role}_text": self.study.out(CorporaPlanner.HELDOUT, language=language)
            for role in ("reference", "target")
            for language in [self.language(role)]
        }

    def pairs(self) -> list[tuple[Cell, Cell]]:
        """(reference job, target job) for every tokenizer and size both parity languages train."""
        parity = self.parity
        if "target" not in parity:
            return []
        scored = self.tokenizers.scored_cells()
        targets = {(j.tokenizer, j.size): j for j in scored if j.language == parity["target"]}
        return [
            (j, targets[(j.tokenizer, j.size)])
            for j in scored
            if j.language == parity["reference"] and (j.tokenizer, j.size) in targets
        ]

    def files(self) -> dict[str, Path]:
        """PUD CoNLL-U file of each language of the multi-parallel parity, sorted by code.

        The languages are the reference and ``analyses.parity.languages``, or every PUD
        language under ``pud_root``; empty without ``pud_root``.
        """
        parity = self.parity
        if "pud_root" not in parity:
            return {}
        root = Path(parity["pud_root"])
        folder = root if root.is_absolute() else self.study.base / root
        if not folder.is_dir():
            raise TokstudyError(f"{PARITY_KEY}.pud_root: no folder {folder}")
        files = pud_treebanks(folder)
        wanted = parity.get("languages", sorted(files))
        for key, languages in (("reference", [parity["reference"]]), ("languages", wanted)):
            for language in languages:
                if language not in files:
                    raise TokstudyError(
                        f"{PARITY_KEY}.{key}: language {language!r} is not in the parallel "
                        f"corpus under {root} (has: {', '.join(sorted(files)) or 'nothing'})"
                    )
        return {language: files[language] for language in sorted({parity["reference"], *wanted})}

    def tokenizers_scored(self) -> list[ParityTokenizer]:
        """The tokenizers the multi-parallel parity scores, each with the parity languages
        it covers: a tokenizer trained per language covers that language, a multilingual
        one all of its languages, a pretrained one every parity language (or those of its
        ``languages`` list). Empty without ``analyses.parity.pud_root``."""
        languages = set(self.files())
        tokenizers = self.tokenizers
        entries = [
            trained_entry(tokenizers, j) for j in tokenizers.cells() if j.language in languages
        ]
        multilingual = self.plan.analyses["multilingual"]
        covered = tuple(sorted(languages & set(multilingual.languages())))
        entries += [
            multilingual_entry(tokenizers, j, covered) for j in multilingual.cells() if covered
        ]
        reaching = tokenizers_reaching(tokenizers, languages)
        return entries + [entry for entry in reaching if entry.kind == "pretrained"]

    def check(self) -> None:
        """The parity languages, ``languages`` only with ``pud_root``, and a tokenizer
        covering the reference and another language of the parallel corpus."""
        study, parity = self.study, self.parity
        for key in ("reference", "target"):
            if "target" in parity and parity[key] not in study.config["languages"]:
                raise TokstudyError(
                    f"{PARITY_KEY}.{key}: language {parity[key]!r} is not in languages"
                )
        if "languages" in parity and "pud_root" not in parity:
            raise TokstudyError(f"{PARITY_KEY}.languages needs pud_root (a parallel corpus)")
        if "pud_root" not in parity:
            return
        covered: dict[str, set[str]] = {}
        for entry in self.tokenizers_scored():
            covered.setdefault(entry.label, set()).update(entry.languages)
        if not any(parity["reference"] in langs and len(langs) > 1 for langs in covered.values()):
            raise TokstudyError(
                f"{PARITY_KEY}: no tokenizer of the study covers {parity['reference']!r} and "
                f"another language of the parallel corpus ({', '.join(self.files())})"
            )

    def targets(self) -> list[str]:
        """The line-aligned parity table, and the PUD premium and fairness tables and plots."""
        pud = bool(self.files())
        tables, plots = ["csv", "md"], ["png", "pdf"]
        patterns = [
            *expand(self.PARITY, ext=tables if self.pairs() else []),
            *expand(self.PARITY_PUD, ext=tables if pud else []),
            *expand(self.PARITY_PUD_FAIRNESS, ext=tables if pud else []),
            *expand(self.PARITY_PUD_PLOT, plot=["heatmap", "bars"], ext=plots if pud else []),
        ]
        return [self.study.out(pattern) for pattern in patterns]
