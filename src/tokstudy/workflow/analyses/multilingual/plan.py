"""The planner of ``analyses.multilingual``: tokenizers trained on a temperature-sampled
mix of the study's languages, and their per-language vocabulary share and fertility."""

from __future__ import annotations

from typing import Any

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import PRETRAINED, Cell, find_cell, make_cell
from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.study.checks import (
    check_balance,
    check_listed,
    check_tokenizer_params,
    registered_adapter,
)
from tokstudy.workflow.study.paths import benchmark_path, expand

MULTILINGUAL_KEY = "config key analyses.multilingual"


class MultilingualPlanner(AnalysisPlanner):
    """``analyses.multilingual``: the mixed text, the tokenizers trained on it (their
    folders are the tokenizers planner's ``MULTILINGUAL_TOKENIZER``) and the tables."""

    #: the mixed training text of the multilingual tokenizers, and its summary
    MULTILINGUAL_TRAIN = "multilingual/corpus/train.txt"
    MULTILINGUAL_MIX = "multilingual/corpus/mix.csv"
    #: the language of each line of the mixed text (a parity-aware tokenizer's split)
    MULTILINGUAL_LANGUAGES = "multilingual/corpus/languages.txt"
    MULTILINGUAL_TABLE = "tables/analysis/multilingual_{table}.{ext}"
    MULTILINGUAL_PLOT = "plots/analysis/multilingual_vocabulary_share.{ext}"

    @property
    def multilingual(self) -> dict[str, Any] | None:
        """The ``analyses.multilingual`` section (``None`` without)."""
        return self.section.get("multilingual")

    def languages(self) -> list[str]:
        """Languages of the multilingual tokenizers (default: all), sorted; empty without."""
        section = self.multilingual
        if section is None:
            return []
        return sorted(set(section.get("languages", self.study.languages)))

    def cells(self) -> list[Cell]:
        """One cell per multilingual tokenizer and size; its language is the mix (``bn+en``)."""
        section = self.multilingual
        if section is None:
            return []
        label = "+".join(self.languages())
        return [
            make_cell(label, tokenizer, size)
            for tokenizer in sorted(set(section["tokenizers"]))
            for size in sorted(set(section["vocab_sizes"]))
        ]

    def comparisons(self) -> list[Cell]:
        """Pretrained tokenizers scored on every multilingual language: they appear in the
        multilingual tables beside the tokenizers trained on the mix."""
        languages = set(self.languages())
        return [
            make_cell("+".join(sorted(languages)), name, None, kind=PRETRAINED)
            for name in self.tokenizers.pretrained_names()
            if languages and languages <= set(self.tokenizers.pretrained_languages(name))
        ]

    def spec(self, tokenizer: str, size: str) -> dict[str, Any]:
        """Training settings of one multilingual tokenizer: its study params, if any; a
        parity-aware one also gets the language of each mixed line (``languages_file``)."""
        cell = find_cell(self.cells(), "+".join(self.languages()), tokenizer, size)
        spec = self.tokenizers.train_spec(cell)
        if self.tokenizers.adapter(tokenizer).parity_aware:
            languages = self.study.out(self.MULTILINGUAL_LANGUAGES)
            spec["params"] = {**spec["params"], "languages_file": languages}
        return spec

    def cost_sources(self) -> list[dict[str, Any]]:
        """The cost table's ``train_multilingual`` row of each multilingual tokenizer (its
        benchmark file, and the mixed text it read; see
        :meth:`tokstudy.workflow.metrics.plan.MetricsPlanner.cost_sources`)."""
        out = self.study.out
        cell = self.tokenizers.MULTILINGUAL_CELL
        benchmark = benchmark_path("train_multilingual_tokenizer", cell)
        return [
            {**job.wildcards(), "vocab_size": job.vocab_size}
            | {"step": "train_multilingual", "figures": out(benchmark, **job.wildcards())}
            | {"texts": [out(self.MULTILINGUAL_TRAIN)]}
            for job in self.cells()
        ]

    def sampling(self) -> dict[str, Any]:
        """How the mixed training text is drawn: ``temperature``, ``seed``, ``total_lines``
        (empty without multilingual tokenizers)."""
        section = self.multilingual
        if section is None:
            return {}
        return {
            "temperature": float(section["temperature"]),
            "seed": self.study.seed,
            "total_lines": section.get("total_lines"),
        }

    def check(self) -> None:
        """Languages, tokenizers, sizes and sampling settings of the section."""
        section = self.multilingual
        if section is None:
            return
        for key in ("languages", "tokenizers", "vocab_sizes"):
            if key in section and not section[key]:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.{key} is empty")
        for key in ("tokenizers", "vocab_sizes"):
            if key not in section:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.{key} is missing")
        languages = section.get("languages", self.study.languages)
        check_listed(
            languages,
            self.study.config["languages"],
            f"{MULTILINGUAL_KEY}.languages: language {{name!r}} is not in languages",
        )
        if len(set(languages)) < 2:
            raise TokstudyError(
                f"{MULTILINGUAL_KEY}.languages: a multilingual tokenizer needs at least two "
                f"languages, got {', '.join(sorted(set(languages)))}"
            )
        for tokenizer in section["tokenizers"]:
            adapter = registered_adapter(
                f"{MULTILINGUAL_KEY}.tokenizers", tokenizer, self.study.config
            )
            if not adapter.sized:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.tokenizers: {tokenizer!r} has no vocabulary size (the "
                    "data sets it); choose a sized tokenizer"
                )
            first = next(cell for cell in self.cells() if cell.tokenizer == tokenizer)
            params = self.spec(tokenizer, first.size)["params"]
            check_balance(adapter, params)
            check_tokenizer_params(tokenizer, adapter, params, self.languages())
        for size in section["vocab_sizes"]:
            if size < 2:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.vocab_sizes: {size} is below 2")
        for key in ("temperature", "total_lines"):
            if section.get(key) is not None and section[key] <= 0:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.{key} must be positive, got {section[key]}"
                )

    def targets(self) -> list[str]:
        """The vocabulary-share and fertility tables and the plot (none without)."""
        tables, plots = (["csv", "md"], ["png", "pdf"]) if self.cells() else ([], [])
        patterns = [
            *expand(self.MULTILINGUAL_TABLE, table=["vocabulary_share", "fertility"], ext=tables),
            *expand(self.MULTILINGUAL_PLOT, ext=plots),
        ]
        return [self.study.out(pattern) for pattern in patterns]
