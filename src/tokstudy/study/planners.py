"""One planner per section of a study: its checks against the rest of the study, the
settings its rules take, and ``targets()``, the files the section produces.

:class:`StudyPlan` holds them all (``Study.plan``); the ``.smk`` files ask it and never
read the config themselves.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tokstudy.analysis.correlation import NMT_METRICS, NMT_SIDES, CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.metrics import check_metric_names
from tokstudy.study.checks import check_listed, registered_adapter
from tokstudy.study.models import ModelsPlanner
from tokstudy.study.nmt import NMTPlanner
from tokstudy.study.resources import rule_resources
from tokstudy.tokenizers.registry import adapter_class

if TYPE_CHECKING:
    from tokstudy.study.core import Study

MULTILINGUAL_KEY = "config key analyses.multilingual"
PARITY_KEY = "config key analyses.parity"
#: the two splits of a prepared corpus
CORPUS_SPLITS = ("train", "heldout")
_WILDCARD_NAME = r"[a-z][a-z0-9_]*"


def _expand(pattern: str, **values: Any) -> list[str]:
    """``pattern`` filled with every combination of ``values`` (first key slowest)."""
    paths = [pattern]
    for key, options in values.items():
        paths = [path.replace(f"{{{key}}}", str(option)) for path in paths for option in options]
    return paths


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
        return _expand(f"{results}/corpora/{{language}}/{{name}}", language=languages, name=names)


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

    def targets(self) -> list[str]:
        """The metric table, its wide tables and plots, the cost table and plot, and the
        frequency plots (with ``plots.frequency_vocab_size``)."""
        results = self.study.results_dir
        languages = self.study.languages if self.study.frequency_plot_size() else []
        return [
            f"{results}/tables/metrics.csv",
            f"{results}/tables/cost.csv",
            *_expand(f"{results}/plots/cost.{{ext}}", ext=["png", "pdf"]),
            *_expand(
                f"{results}/tables/metrics_{{split}}.{{ext}}",
                split=CORPUS_SPLITS,
                ext=["md", "tex"],
            ),
            *_expand(
                f"{results}/plots/metrics/{{metric}}_{{split}}.{{ext}}",
                metric=self.names,
                split=CORPUS_SPLITS,
                ext=["png", "pdf"],
            ),
            *_expand(
                f"{results}/plots/frequencies/{{language}}.{{ext}}",
                language=languages,
                ext=["png", "pdf"],
            ),
        ]


class AnalysesPlanner:
    """``analyses``: segmentation, UD alignment, parity, multilingual tokenizers and the
    correlation of intrinsic metrics with the downstream scores of ``nmt``."""

    def __init__(self, study: Study, nmt: NMTPlanner) -> None:
        self.study = study
        self.nmt = nmt
        section = study.analyses.get("correlation")
        if section not in (None, False) and not {"models", "nmt"} & set(study.config):
            raise TokstudyError(
                "config key analyses.correlation: the study has no downstream stage "
                "(a models: or nmt: section) to correlate intrinsic metrics with"
            )
        self._check_parity()
        for language, word_list in sorted(self._words().items()):
            if language not in study.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.segmentation.words.{language}: not in languages"
                )
            if not word_list:
                raise TokstudyError(f"config key analyses.segmentation.words.{language} is empty")
        self._check_multilingual()

    def _words(self) -> dict[str, list[str]]:
        return (self.study.analyses.get("segmentation") or {}).get("words") or {}

    def segmentation_words(self, language: str) -> list[str]:
        """The words whose segmentations a language's table shows."""
        return self._words()[language]

    def _check_parity(self) -> None:
        study = self.study
        parity = study.analyses.get("parity") or {}
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
        for entry in study.parity_tokenizers():
            covered.setdefault(entry.label, set()).update(entry.languages)
        if not any(parity["reference"] in langs and len(langs) > 1 for langs in covered.values()):
            raise TokstudyError(
                f"{PARITY_KEY}: no tokenizer of the study covers {parity['reference']!r} and "
                f"another language of the parallel corpus ({', '.join(study.parity_files())})"
            )

    def _check_multilingual(self) -> None:
        section = self.study.analyses.get("multilingual")
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
            if not registered_adapter(f"{MULTILINGUAL_KEY}.tokenizers", tokenizer).sized:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.tokenizers: {tokenizer!r} has no vocabulary size (the "
                    "data sets it); choose a sized tokenizer"
                )
        for size in section["vocab_sizes"]:
            if size < 2:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.vocab_sizes: {size} is below 2")
        for key in ("temperature", "total_lines"):
            if section.get(key) is not None and section[key] <= 0:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.{key} must be positive, got {section[key]}"
                )

    @property
    def correlation(self) -> dict[str, Any] | None:
        """Settings of the correlation analysis, or ``None`` when it does not run."""
        return self.study.correlation()

    def correlation_settings(self) -> dict[str, Any]:
        """What the correlation rule resamples with: the study's seed and the section."""
        return {"seed": self.study.seed, **(self.correlation or {})}

    @property
    def correlation_nmt_side(self) -> str:
        """The NMT side whose tokenizers' metrics the NMT cells take."""
        return (self.correlation or {}).get("nmt_side", CorrelationSettings.nmt_side)

    def nmt_metric_sides(self) -> dict[str, str]:
        """Direction → the side (language) whose NMT tokenizer gives the cells' intrinsic
        metrics; empty for joint vocabularies (one tokenizer for both languages: no
        per-language metrics, so NMT cells are not correlated)."""
        nmt = self.nmt
        if nmt.nmt is None or nmt.config.joint:
            return {}
        index = NMT_SIDES.index(self.correlation_nmt_side)
        return {direction: nmt.sides(direction)[1 - index] for direction in nmt.config.directions}

    def nmt_metric_files(self) -> list[str]:
        """The metric files of the NMT tokenizers the correlation needs, sorted."""
        sides = self.nmt_metric_sides()
        return sorted(
            {
                f"{self.study.results_dir}/"
                + NMT_METRICS.format(
                    side=sides[run.direction], tokenizer=run.tokenizer, size=run.size
                )
                for run in self.nmt.runs()
                if run.direction in sides
            }
        )

    def targets(self) -> list[str]:
        """The tables and plots of every analysis the study asks for (correlation apart)."""
        study, results = self.study, self.study.results_dir
        tables, plots = f"{results}/tables/analysis", f"{results}/plots/analysis"
        ud = study.analyses.get("ud_root")
        parity_pud = bool(study.parity_files())
        multilingual = bool(study.multilingual_jobs())
        return [
            *_expand(
                f"{tables}/segmentation_{{language}}.{{ext}}",
                language=study.segmentation_languages(),
                ext=["csv", "md"],
            ),
            *_expand(f"{tables}/morphological_alignment.{{ext}}", ext=["csv", "md"] if ud else []),
            *_expand(f"{tables}/parity.{{ext}}", ext=["csv", "md"] if study.parity_pairs() else []),
            *_expand(
                f"{tables}/parity_pud{{table}}.{{ext}}",
                table=["", "_fairness"],
                ext=["csv", "md"] if parity_pud else [],
            ),
            *_expand(
                f"{plots}/parity_pud_{{plot}}.{{ext}}",
                plot=["heatmap", "bars"],
                ext=["png", "pdf"] if parity_pud else [],
            ),
            *_expand(
                f"{tables}/multilingual_{{table}}.{{ext}}",
                table=["vocabulary_share", "fertility"],
                ext=["csv", "md"] if multilingual else [],
            ),
            *_expand(
                f"{plots}/multilingual_vocabulary_share.{{ext}}",
                ext=["png", "pdf"] if multilingual else [],
            ),
        ]

    def correlation_targets(self) -> list[str]:
        """The correlation tables and plot (none when the analysis does not run)."""
        if self.correlation is None:
            return []
        tables, plots = f"{self.study.results_dir}/tables/analysis", "plots/analysis"
        return [
            f"{tables}/correlation.csv",
            f"{tables}/correlation.md",
            f"{tables}/correlation_ranking.csv",
            f"{tables}/correlation_ranking.md",
            f"{self.study.results_dir}/{plots}/correlation.png",
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
