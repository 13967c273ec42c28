"""One planner per section of a study: its checks against the rest of the study, the
settings its rules take, and ``targets()``, the files the section produces.

:class:`StudyPlan` holds them all (``Study.plan``); the ``.smk`` files ask it and never
read the config themselves.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tokstudy.cells import PRETRAINED, Job
from tokstudy.errors import TokstudyError
from tokstudy.metrics import check_metric_names
from tokstudy.study.analyses import AnalysesPlanner
from tokstudy.study.checks import check_listed, registered_adapter
from tokstudy.study.models import ModelsPlanner
from tokstudy.study.nmt import NMTPlanner
from tokstudy.study.paths import expand
from tokstudy.study.resources import rule_resources
from tokstudy.tokenizers.registry import adapter_class

if TYPE_CHECKING:
    from tokstudy.study.core import Study

#: the two splits of a prepared corpus
CORPUS_SPLITS = ("train", "heldout")
_WILDCARD_NAME = r"[a-z][a-z0-9_]*"


class CorporaPlanner:
    """``languages`` and ``corpus_defaults``: the prepared corpora of the study."""

    def __init__(self, study: Study) -> None:
        self.study = study
        for language in study.languages:
            study.source_files(language)
            for name in sorted(study.language_entry(language).get("tokenizer_params") or {}):
                registered_adapter(f"config key languages.{language}.tokenizer_params.{name}", name)

    def settings(self, language: str) -> dict[str, Any]:
        """How ``prepare_corpus`` cleans and splits a language's corpus."""
        keys = ("heldout", "max_lines", "on_invalid_utf8", "max_line_bytes")
        return {key: self.study.corpus_setting(language, key) for key in keys} | {
            "checksums": self.study.corpus_checksums(language),
            "seed": self.study.seed,
        }

    def targets(self) -> list[str]:
        """The prepared corpus (train, heldout, stats) of every language a cell scores."""
        languages = sorted({job.language for job in self.study.scored_jobs()})
        results = self.study.results_dir
        names = ["train.txt", "heldout.txt", "stats.json"]
        return expand(f"{results}/corpora/{{language}}/{{name}}", language=languages, name=names)


class TokenizersPlanner:
    """``tokenizers`` and ``pretrained``: the tokenizers trained or imported."""

    def __init__(self, study: Study) -> None:
        self.study = study
        for name in study.config["tokenizers"]:
            adapter_class(name)
            check_listed(
                study.tokenizer_languages(name),
                study.config["languages"],
                f"config key tokenizers.{name}.languages: {{name!r}} is not under languages "
                "(known: {known})",
            )
        self._check_pretrained()

    def _check_pretrained(self) -> None:
        study = self.study
        for name in study.pretrained_names():
            key = f"config key pretrained.{name}"
            entry = study.pretrained[name]
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
            if "path" in entry and not study.pretrained_source(name).exists():
                raise TokstudyError(f"{key}.path: no such file or folder {entry['path']}")

    def targets(self) -> list[str]:
        """The directory of every scored tokenizer (trained per language, or pretrained)."""
        return sorted({self.study.tokenizer_dir(job) for job in self.study.scored_jobs()})


class MetricsPlanner:
    """``metrics`` and ``plots``: intrinsic metrics of every cell, their tables and plots."""

    def __init__(self, study: Study) -> None:
        self.study = study
        check_metric_names(self.names)

    @property
    def names(self) -> list[str]:
        """The metrics of the study, in the order given (the schema requires the key; a
        config built by hand may leave it out)."""
        return list(self.study.config.get("metrics", []))

    @property
    def skip_top_ranks(self) -> int:
        """How many of the most frequent tokens the frequency plots leave out."""
        return self.study.config["plots"]["skip_top_ranks"]

    def frequency_plot_size(self) -> str:
        """The vocabulary size whose token-frequency distributions are plotted."""
        return str(self.study.config["plots"].get("frequency_vocab_size", ""))

    def frequency_plot_jobs(self, language: str) -> list[Job]:
        """Jobs of one language at the plotted size (sized tokenizers that train it), and the
        pretrained tokenizers scored on it."""
        size = self.frequency_plot_size()
        return [
            j
            for j in self.study.scored_jobs()
            if j.language == language and j.size in (size, PRETRAINED)
        ]

    def cost_sources(self, multilingual: list[Job]) -> list[dict[str, Any]]:
        """Every tokenizer-training and metric job (and the ``multilingual`` tokenizers'
        training): its cell, step, benchmark file and the texts it read."""
        results = self.study.results_dir
        sources = []
        for job in self.study.jobs():
            cell = {"language": job.language, "tokenizer": job.tokenizer, "size": job.size}
            train = f"{results}/corpora/{job.language}/train.txt"
            heldout = f"{results}/corpora/{job.language}/heldout.txt"
            for step, rule, texts in (
                ("train", "train_tokenizer", [train]),
                ("metrics", "compute_metrics", [train, heldout]),
            ):
                cell_path = f"{job.language}/{job.tokenizer}/{job.size}"
                benchmark = f"{results}/benchmarks/{rule}/{cell_path}.tsv"
                sources.append({**cell, "step": step, "benchmark": benchmark, "texts": texts})
        for job in multilingual:
            benchmark = (
                f"{results}/benchmarks/train_multilingual_tokenizer/{job.tokenizer}/{job.size}.tsv"
            )
            sources.append(
                {"language": job.language, "tokenizer": job.tokenizer, "size": job.size}
                | {"step": "train_multilingual", "benchmark": benchmark}
                | {"texts": [f"{results}/multilingual/corpus/train.txt"]}
            )
        return sources

    def targets(self) -> list[str]:
        """The metric table, its wide tables and plots, the cost table and plot, and the
        frequency plots (with ``plots.frequency_vocab_size``)."""
        results = self.study.results_dir
        languages = self.study.languages if self.frequency_plot_size() else []
        return [
            f"{results}/tables/metrics.csv",
            f"{results}/tables/cost.csv",
            *expand(f"{results}/plots/cost.{{ext}}", ext=["png", "pdf"]),
            *expand(
                f"{results}/tables/metrics_{{split}}.{{ext}}",
                split=CORPUS_SPLITS,
                ext=["md", "tex"],
            ),
            *expand(
                f"{results}/plots/metrics/{{metric}}_{{split}}.{{ext}}",
                metric=self.names,
                split=CORPUS_SPLITS,
                ext=["png", "pdf"],
            ),
            *expand(
                f"{results}/plots/frequencies/{{language}}.{{ext}}",
                language=languages,
                ext=["png", "pdf"],
            ),
        ]


class StudyPlan:
    """Every section planner of a study, built (and so checked) once, in this order."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.tokenizers = TokenizersPlanner(study)
        self.metrics = MetricsPlanner(study)
        self.corpora = CorporaPlanner(study)
        self.models = ModelsPlanner(study)
        self.nmt = NMTPlanner(study)
        self.analyses = AnalysesPlanner(study, self.nmt)

    def targets(self) -> list[str]:
        """Everything the study produces (``rule all``), each file once."""
        planners = (self.corpora, self.tokenizers, self.metrics, self.models, self.nmt)
        paths = [path for planner in planners for path in planner.targets()]
        paths += self.analyses.targets() + self.analyses.correlation_targets()
        return list(dict.fromkeys(paths))

    def threads(self, rule: str) -> int:
        """The threads of a rule (defaults, then the study's ``resources:``)."""
        return rule_resources(rule, self.study.config["resources"])["threads"]

    def resources(self, rule: str) -> dict[str, Any]:
        """The resources of a rule but threads: ``mem_mb``, ``runtime`` and any cluster key."""
        resolved = rule_resources(rule, self.study.config["resources"])
        return {key: value for key, value in resolved.items() if key != "threads"}
