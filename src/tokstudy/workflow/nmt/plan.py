"""The planner of the ``nmt:`` section: the section resolved into jobs, paths and settings.

Paths are relative to the results folder. The corpus is split once; tokenizers are trained
on the split's training side of each language (``side`` = the language code) or, with
``joint``, on both sides together (``side`` = ``joint``); one model is trained per
direction × tokenizer × size × seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError
from tokstudy.nmt.config import REPORT_FILES, TABLE_FORMATS, NMTConfig
from tokstudy.nmt.data import SPLITS, parse_direction
from tokstudy.nmt.data import SUMMARY_FILE as SPLIT_SUMMARY_FILE
from tokstudy.tokenizers.cells import Cell, find_cell, make_cell, size_label
from tokstudy.training.config import from_mapping, seeded_dict
from tokstudy.workflow.study.checks import registered_adapter
from tokstudy.workflow.study.paths import fill

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

JOINT = "joint"


@dataclass(frozen=True)
class Run:
    """One translation model: direction, tokenizer, vocabulary size, seed."""

    direction: str
    tokenizer: str
    size: str
    seed: int


class NMTPlanner:
    """The ``nmt:`` section of a study (``None`` without one: then there are no jobs)."""

    #: the built-in corpus (CLDR names), used when ``nmt.corpus`` gives no files
    CLDR_CORPUS = "nmt/corpus/cldr.tsv"
    #: one side (language code, or ``joint``) of one split of the parallel corpus
    SPLIT = "nmt/split/{split}.{side}"
    SPLIT_SUMMARY = f"nmt/split/{SPLIT_SUMMARY_FILE}"
    #: an NMT tokenizer: its side, tokenizer and size
    SIDE_CELL = "{side}/{tokenizer}/{size}"
    TOKENIZER = f"nmt/tokenizers/{SIDE_CELL}"
    #: intrinsic metrics of an NMT tokenizer on its side's split (for the correlation)
    TOKENIZER_METRICS = f"nmt/metrics/{SIDE_CELL}.tsv"
    TOKENIZER_FREQUENCIES = f"nmt/frequencies/{SIDE_CELL}.tsv"
    #: one translation model
    RUN_CELL = "{direction}/{tokenizer}/{size}/seed{seed}"
    RUN = f"nmt/runs/{RUN_CELL}"
    TRANSLATION = f"nmt/translations/{RUN_CELL}.txt"
    SCORE = f"nmt/scores/{RUN_CELL}.json"
    #: a file of the report (``tokstudy.nmt.config.REPORT_FILES``)
    REPORT = "tables/nmt/{file}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        raw = study.config.get("nmt")
        self.nmt: NMTConfig | None = None if raw is None else from_mapping(NMTConfig, raw, "nmt")
        if self.nmt is not None:
            self._check(self.nmt)

    def _check(self, nmt: NMTConfig) -> None:
        for name in nmt.tokenizers:
            registered_adapter("config key nmt.tokenizers", name, self.study.config)
        if not nmt.tokenizers or not nmt.vocab_sizes or not nmt.seeds or not nmt.directions:
            raise TokstudyError("config keys nmt.tokenizers, vocab_sizes, seeds, directions: empty")
        for path in self.corpus_files():
            if not Path(path).is_file():
                raise TokstudyError(f"config key nmt.corpus: file not found: {path}")

    @property
    def config(self) -> NMTConfig:
        """The section (defaults when the study has none; then no job uses it)."""
        return self.nmt or NMTConfig()

    @property
    def languages(self) -> tuple[str, str]:
        """The language pair, in the order of the corpus columns."""
        first, second = self.config.languages
        return first, second

    def corpus_files(self) -> list[str]:
        """The configured corpus files (absolute or relative to the study's base)."""
        return [
            str(path if path.is_absolute() else self.study.base / path)
            for path in map(Path, self.config.corpus.paths)
        ]

    def corpus_inputs(self) -> list[str]:
        """The split rule's input: the configured files, else the built-in corpus file."""
        return self.corpus_files() or [self.study.out(self.CLDR_CORPUS)]

    def split_outputs(self) -> dict[str, str]:
        """``{split}_{lang}`` → file of each side of each split, and the summary."""
        out = self.study.out
        files = {
            f"{split}_{language}": out(self.SPLIT, split=split, side=language)
            for split in SPLITS
            for language in self.languages
        }
        return files | {"summary": out(self.SPLIT_SUMMARY)}

    def vocab_sizes(self, tokenizer: str) -> list[int | None]:
        """The sizes a tokenizer is trained at (``[None]`` when the data sets the size)."""
        if not registered_adapter("config key nmt.tokenizers", tokenizer, self.study.config).sized:
            return [None]
        return sorted(set(self.config.vocab_sizes))

    def sizes(self, tokenizer: str) -> list[str]:
        """Size labels of a tokenizer (``full`` when the data sets the size)."""
        return [size_label(tokenizer, size) for size in self.vocab_sizes(tokenizer)]

    def sides(self, direction: str) -> tuple[str, str]:
        """The tokenizer sides (language codes, or ``joint`` twice) of a direction."""
        if self.config.joint:
            return JOINT, JOINT
        return parse_direction(direction)

    def tokenizer_path(self, run: Any, role: str) -> str:
        """The tokenizer folder of a run's ``source`` or ``target`` side (any object with
        ``direction``, ``tokenizer`` and ``size``, such as a job's wildcards)."""
        side = self.sides(run.direction)[("source", "target").index(role)]
        return fill(self.TOKENIZER, side=side, tokenizer=run.tokenizer, size=run.size)

    def tokenizer_jobs(self) -> list[Cell]:
        """Every NMT tokenizer to train, as (side, tokenizer, size)."""
        if self.nmt is None:
            return []
        sides = [JOINT] if self.nmt.joint else list(self.languages)
        return [
            make_cell(side, tokenizer, size)
            for side in sides
            for tokenizer in sorted(self.nmt.tokenizers)
            for size in self.vocab_sizes(tokenizer)
        ]

    def train_spec(self, side: str, tokenizer: str, size: str) -> dict[str, Any]:
        """Training settings of one NMT tokenizer (the study's params for it, if any)."""
        return self.tokenizers.train_spec(find_cell(self.tokenizer_jobs(), side, tokenizer, size))

    def runs(self) -> list[Run]:
        """Every model of the study, in a stable order."""
        if self.nmt is None:
            return []
        return [
            Run(direction, tokenizer, size, seed)
            for direction in self.nmt.directions
            for tokenizer in sorted(self.nmt.tokenizers)
            for size in self.sizes(tokenizer)
            for seed in sorted(self.nmt.seeds)
        ]

    def seeded_training(self, seed: str) -> dict[str, Any]:
        """``nmt.train`` settings as a dict, with the run's seed."""
        return seeded_dict(self.config.train, seed)

    def score_files(self) -> list[str]:
        """The score file of every run."""
        return [self.study.out(self.SCORE, **vars(run)) for run in self.runs()]

    def report_outputs(self) -> dict[str, str]:
        """Name → file of everything the report rule writes."""
        out = self.study.out
        tables = {
            f"{REPORT_FILES[name]}_{suffix[1:]}": out(self.REPORT, file=REPORT_FILES[name] + suffix)
            for name in ("table1_bleu", "table1_chrf")
            for suffix in TABLE_FORMATS
        }
        others = {name: out(self.REPORT, file=REPORT_FILES[name]) for name in REPORT_FILES}
        return tables | {
            name: path for name, path in others.items() if not name.startswith("table1")
        }

    def targets(self) -> list[str]:
        """What the stage produces for ``rule all`` (nothing without the section)."""
        return [] if self.nmt is None else list(self.report_outputs().values())
