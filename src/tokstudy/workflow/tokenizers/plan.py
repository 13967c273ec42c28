"""The planner of the ``tokenizers:`` and ``pretrained:`` sections: the tokenizers the
study trains or imports, their checks, paths and targets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.cells import PRETRAINED, Cell, find_cell, make_cell, size_label
from tokstudy.tokenizers.registry import adapter_class, adapter_names, family_of
from tokstudy.tokenizers.train_fraction import check_fraction, check_max_lines
from tokstudy.workflow.study.checks import (
    check_balance,
    check_listed,
    check_tokenizer_params,
    registered_adapter,
    tokenizer_algorithm,
)
from tokstudy.workflow.study.paths import CELL

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study

_WILDCARD_NAME = r"[a-z][a-z0-9_]*"
HUB_URL = "https://huggingface.co/{hub}/resolve/main/tokenizer.json"


class TokenizersPlanner:
    """``tokenizers`` and ``pretrained``: the tokenizers trained or imported, and the cells
    of the study (language × tokenizer × size)."""

    #: the folder of a tokenizer trained on one language
    TOKENIZER = f"tokenizers/{CELL}"
    #: wall, CPU and peak memory of the training and metric phases of a cell's job
    #: (:mod:`tokstudy.runtime.job_cost`; outside the tokenizer folder, whose files are hashed)
    CELL_COST = f"costs/{CELL}.json"
    #: the log and benchmark name of a job that trains every size of one language and
    #: tokenizer (``train_sizes_together``)
    ALL_SIZES_CELL = "{language}/{tokenizer}"
    #: the folder a pretrained tokenizer is imported into
    PRETRAINED = "pretrained/{name}"
    #: where a ``hub:`` tokenizer is downloaded to (never without ``hub:``)
    PRETRAINED_DOWNLOAD = "downloads/pretrained/{name}/tokenizer.json"
    #: a multilingual tokenizer (its language is the mix; analyses.multilingual)
    MULTILINGUAL_CELL = "{tokenizer}/{size}"
    MULTILINGUAL_TOKENIZER = f"multilingual/tokenizers/{MULTILINGUAL_CELL}"

    def __init__(self, study: Study) -> None:
        self.study = study
        settings: dict[str, tuple] = {}
        for name in study.config["tokenizers"]:
            adapter = self._check_algorithm(name)
            check_listed(
                self.tokenizer_languages(name),
                study.config["languages"],
                f"config key tokenizers.{name}.languages: {{name!r}} is not under languages "
                "(known: {known})",
            )
            checked = []
            for language in self.tokenizer_languages(name):
                params = self.train_params(language, name)
                check_balance(adapter, params)
                checked.append(
                    check_tokenizer_params(name, adapter, params, self.tokenizer_languages(name))
                )
            entry = study.config["tokenizers"][name] or {}
            if "train_fraction" in entry:
                check_fraction(
                    entry["train_fraction"], f"config key tokenizers.{name}.train_fraction"
                )
            cap = check_max_lines(
                self.max_train_lines(name), f"config key tokenizers.{name}.max_train_lines"
            )
            same = (self.algorithm(name), repr(checked), entry.get("train_fraction", 1), cap)
            sizes = entry.get("vocab_sizes", study.config.get("vocab_sizes"))
            same += (repr(sorted(set(sizes or []))), repr(self.tokenizer_languages(name)))
            if same in settings:
                first, second = sorted([name, settings[same]])
                raise TokstudyError(
                    f"config keys tokenizers.{first} and tokenizers.{second}: the same "
                    "algorithm, params, train_fraction, max_train_lines, sizes and languages: "
                    "one tokenizer trained twice under two names"
                )
            settings[same] = name
        self._check_pretrained()

    def _check_algorithm(self, name: str) -> type[Tokenizer]:
        """A tokenizer's adapter: its own name's, or a named variant's ``algorithm``, which
        must be a registered, sized adapter; one line naming the key otherwise."""
        entry = self.study.config["tokenizers"][name] or {}
        key = f"config key tokenizers.{name}"
        if "algorithm" not in entry:
            if name not in adapter_names():
                raise TokstudyError(
                    f"{key}: unknown tokenizer {name!r}; valid choices: "
                    f"{', '.join(adapter_names())} (or a named variant with its algorithm: "
                    f"tokenizers: {{{name}: {{algorithm: hf_bpe, …}}}})"
                )
            return adapter_class(name)
        algorithm = entry["algorithm"]
        if name in adapter_names() and algorithm != name:
            raise TokstudyError(
                f"{key}.algorithm: {name!r} is itself an algorithm; give the variant of "
                f"{algorithm!r} another name"
            )
        adapter = registered_adapter(f"{key}.algorithm", name, self.study.config)
        if not adapter.sized:
            raise TokstudyError(
                f"{key}.algorithm: {algorithm!r} sets its size from the data; a named variant "
                "must be of a sized algorithm"
            )
        return adapter

    def algorithm(self, name: str) -> str:
        """The registered adapter tokenizer ``name`` trains with (a named variant's
        ``algorithm``, else the name)."""
        return tokenizer_algorithm(self.study.config, name)

    def adapter(self, name: str) -> type[Tokenizer]:
        """The adapter class tokenizer ``name`` trains with."""
        return adapter_class(self.algorithm(name))

    def families(self) -> dict[str, str]:
        """Each trained tokenizer's family: its algorithm's (:func:`family_of`)."""
        return {name: family_of(self.algorithm(name)) for name in self.study.tokenizers}

    def _check_pretrained(self) -> None:
        study = self.study
        for name in self.pretrained_names():
            key = f"config key pretrained.{name}"
            entry = self.pretrained[name]
            if name in study.config["tokenizers"]:
                raise TokstudyError(f"{key}: the name is also a trained tokenizer; rename one")
            if not re.fullmatch(_WILDCARD_NAME, name):
                raise TokstudyError(
                    f"{key}: a name is lower-case letters, digits and _, starting with a letter"
                )
            check_listed(
                entry.get("languages") or [],
                study.config["languages"],
                f"{key}.languages: {{name!r}} is not in languages",
            )
            if "path" not in entry and "hub" not in entry:
                raise TokstudyError(f"{key}: give path (a local file or folder) or hub")
            if "path" not in entry and not entry.get("sha256"):
                raise TokstudyError(f"{key}: a hub download needs sha256")
            if "path" in entry and not self.pretrained_source(name).exists():
                raise TokstudyError(f"{key}.path: no such file or folder {entry['path']}")

    def vocab_sizes(self, tokenizer: str) -> list[int | None]:
        """The sizes a tokenizer is trained at, sorted (``[None]`` when the data sets it)."""
        if not self.adapter(tokenizer).sized:
            return [None]
        config = self.study.config
        entry = config["tokenizers"][tokenizer] or {}
        sizes = entry.get("vocab_sizes", config.get("vocab_sizes"))
        if not sizes:
            raise TokstudyError(
                f"config key tokenizers.{tokenizer}.vocab_sizes (or vocab_sizes) is missing"
            )
        return sorted(set(sizes))

    def sizes(self, tokenizer: str) -> list[str]:
        """Vocabulary-size labels of a tokenizer (``full`` when the data sets the size)."""
        return [size_label(tokenizer, size) for size in self.vocab_sizes(tokenizer)]

    def tokenizer_languages(self, tokenizer: str) -> list[str]:
        """The languages a tokenizer is trained on: its ``languages`` key, else all."""
        entry = self.study.config["tokenizers"][tokenizer] or {}
        return sorted(entry.get("languages", self.study.languages))

    def cells(self) -> list[Cell]:
        """Every (language, tokenizer, size) of the study, in a stable order."""
        return [
            make_cell(language, tokenizer, size)
            for language in self.study.languages
            for tokenizer in self.study.tokenizers
            if language in self.tokenizer_languages(tokenizer)
            for size in self.vocab_sizes(tokenizer)
        ]

    def cell(self, language: str, tokenizer: str, size: str) -> Cell:
        """The scored cell a job's wildcards name (:func:`~tokstudy.tokenizers.cells.find_cell`)."""
        return find_cell(self.scored_cells(), language, tokenizer, size)

    def shared_vocab_sizes(self) -> list[int]:
        """The study's ``vocab_sizes``, sorted (none without the key)."""
        return sorted(set(self.study.config.get("vocab_sizes") or []))

    def shared_sizes(self) -> list[str]:
        """The labels of the study's ``vocab_sizes``, sorted (none without the key)."""
        return [str(size) for size in self.shared_vocab_sizes()]

    def trained_together(self) -> list[str]:
        """The tokenizers whose cells of one language are one job, sorted: with
        ``train_sizes_together``, every sized tokenizer trained at the study's
        ``vocab_sizes`` (one with its own sizes, or unsized, keeps a job per cell)."""
        if not self.study.config["train_sizes_together"]:
            return []
        shared = self.shared_vocab_sizes()
        return [
            name
            for name in self.study.tokenizers
            if self.adapter(name).sized and self.vocab_sizes(name) == shared
        ]

    def is_trained_together(self, cell: Cell) -> bool:
        """Whether a cell's tokenizer is trained in its language's one job for all sizes."""
        return cell.size != PRETRAINED and cell.tokenizer in self.trained_together()

    def train_specs(self, language: str, tokenizer: str) -> dict[str, dict[str, Any]]:
        """Size → :meth:`train_spec` of the cells one ``train_sizes_together`` job trains."""
        cells = [make_cell(language, tokenizer, size) for size in self.shared_vocab_sizes()]
        return {cell.size: self.train_spec(cell) for cell in cells}

    def train_spec(self, job: Cell) -> dict[str, Any]:
        """JSON-able training settings of one job (also what triggers its rerun); the
        tokenizer's ``train_fraction`` and ``max_train_lines`` only where the study gives
        them, and a named variant's ``algorithm``.

        A tokenizer or language the study does not list (one trained only for the NMT
        stage, or on a joint text) gets its registry defaults.
        """
        config = self.study.config
        entry = config["tokenizers"].get(job.tokenizer) or {}
        return {
            "vocab_size": job.vocab_size,
            "params": self.train_params(job.language, job.tokenizer),
            "seed": self.study.seed,
            "size_policy": config["size_policy"],
            "label": job.language,
            **({"train_fraction": entry["train_fraction"]} if "train_fraction" in entry else {}),
            **({"max_train_lines": cap} if (cap := self.max_train_lines(job.tokenizer)) else {}),
            **({"algorithm": entry["algorithm"]} if "algorithm" in entry else {}),
        }

    def max_train_lines(self, tokenizer: str) -> int | None:
        """The most lines ``tokenizer`` trains on: its own ``max_train_lines``, else the
        study's (None: no cap)."""
        config = self.study.config
        entry = config["tokenizers"].get(tokenizer) or {}
        return entry["max_train_lines"] if "max_train_lines" in entry else config["max_train_lines"]

    def train_params(self, language: str, tokenizer: str) -> dict[str, Any]:
        """A tokenizer's ``params``, with its language's ``tokenizer_params`` over them."""
        config = self.study.config
        params = dict((config["tokenizers"].get(tokenizer) or {}).get("params") or {})
        language_entry = config["languages"].get(language) or {}
        params.update((language_entry.get("tokenizer_params") or {}).get(tokenizer) or {})
        return params

    @property
    def pretrained(self) -> dict[str, Any]:
        """The ``pretrained`` section (empty when absent)."""
        return self.study.config.get("pretrained") or {}

    def pretrained_names(self) -> list[str]:
        """Names of the pretrained tokenizers, sorted."""
        return sorted(self.pretrained)

    def is_pretrained(self, tokenizer: str) -> bool:
        """Whether a tokenizer name is a pretrained one (scored, never trained)."""
        return tokenizer in self.pretrained

    def pretrained_languages(self, name: str) -> list[str]:
        """The languages a pretrained tokenizer is scored on: its ``languages``, else all."""
        return sorted(self.pretrained[name].get("languages") or self.study.languages)

    def scored_cells(self) -> list[Cell]:
        """Every cell that gets metrics: the trained cells, then one cell (size label
        ``pretrained``) per pretrained tokenizer and language it is scored on."""
        return self.cells() + [
            make_cell(language, name, None, kind=PRETRAINED)
            for language in self.study.languages
            for name in self.pretrained_names()
            if language in self.pretrained_languages(name)
        ]

    def pretrained_dir(self, name: str) -> str:
        """The tokstudy directory a pretrained tokenizer is imported into."""
        return self.study.out(self.PRETRAINED, name=name)

    def tokenizer_dir(self, job: Cell) -> str:
        """The tokenizer directory of any scored cell (trained or pretrained)."""
        if job.size == PRETRAINED:
            return self.pretrained_dir(job.tokenizer)
        return self.study.out(self.TOKENIZER, **job.wildcards())

    def pretrained_source(self, name: str) -> Path:
        """The file or folder a pretrained tokenizer is read from: its ``path`` (relative to
        the study's base folder), else the file its ``hub:`` download rule writes."""
        entry = self.pretrained[name]
        if "path" not in entry:
            return Path(self.study.out(self.PRETRAINED_DOWNLOAD, name=name))
        path = Path(entry["path"])
        return path if path.is_absolute() else self.study.base / path

    def pretrained_hub_url(self, name: str) -> str:
        """The download address of a ``hub:`` tokenizer's ``tokenizer.json``."""
        return HUB_URL.format(hub=self.pretrained[name]["hub"])

    def targets(self) -> list[str]:
        """The directory of every scored tokenizer (trained per language, or pretrained)."""
        return sorted({self.tokenizer_dir(job) for job in self.scored_cells()})
