"""The planner of the ``analyses:`` section: segmentation tables, UD alignment, parity
(line-aligned and multi-parallel), multilingual tokenizers and the correlation of intrinsic
metrics with downstream scores; its checks, job lists, paths and targets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.analysis.correlation_settings import NMT_SIDES, CorrelationSettings
from tokstudy.analysis.ud import pud_treebanks
from tokstudy.analysis.udhr import (
    EVERY_TRANSLATION,
    INDEX_FILE,
    read_index,
    select_codes,
    translation_file,
    translations_of,
    udhr_coverage,
)
from tokstudy.cells import FULL_SIZE_LABEL, PRETRAINED, Job, ParityTokenizer
from tokstudy.errors import TokstudyError
from tokstudy.study.checks import check_listed, registered_adapter
from tokstudy.study.corpora import CorporaPlanner
from tokstudy.study.nmt import NMTPlanner
from tokstudy.study.paths import benchmark_path, expand

if TYPE_CHECKING:
    from tokstudy.study.core import Study
    from tokstudy.study.tokenizers import TokenizersPlanner

MULTILINGUAL_KEY = "config key analyses.multilingual"
PARITY_KEY = "config key analyses.parity"


class AnalysesPlanner:
    """``analyses``: segmentation, UD alignment, parity, multilingual tokenizers and the
    correlation of intrinsic metrics with the downstream scores of ``nmt``."""

    SEGMENTATION = "tables/analysis/segmentation_{language}.{ext}"
    MORPHOLOGICAL_ALIGNMENT = "tables/analysis/morphological_alignment.{ext}"
    PARITY = "tables/analysis/parity.{ext}"
    PARITY_PUD = "tables/analysis/parity_pud.{ext}"
    PARITY_PUD_FAIRNESS = "tables/analysis/parity_pud_fairness.{ext}"
    PARITY_PUD_PLOT = "plots/analysis/parity_pud_{plot}.{ext}"
    PARITY_UDHR = "tables/analysis/parity_udhr.{ext}"
    PARITY_UDHR_FAIRNESS = "tables/analysis/parity_udhr_fairness.{ext}"
    PARITY_UDHR_SCRIPTS = "tables/analysis/parity_udhr_scripts.{ext}"
    PARITY_UDHR_PLOT = "plots/analysis/parity_udhr_{plot}.{ext}"
    #: the plots of the UDHR parity (rule plot_parity_udhr)
    udhr_plots = ("map", "curves", "scripts")
    #: the mixed training text of the multilingual tokenizers, and its summary
    MULTILINGUAL_TRAIN = "multilingual/corpus/train.txt"
    MULTILINGUAL_MIX = "multilingual/corpus/mix.csv"
    #: a multilingual tokenizer (its language is the mix)
    MULTILINGUAL_CELL = "{tokenizer}/{size}"
    MULTILINGUAL_TOKENIZER = f"multilingual/tokenizers/{MULTILINGUAL_CELL}"
    MULTILINGUAL_TABLE = "tables/analysis/multilingual_{table}.{ext}"
    MULTILINGUAL_PLOT = "plots/analysis/multilingual_vocabulary_share.{ext}"
    #: intrinsic metrics of the NMT stage's tokenizers, for the correlation
    NMT_METRICS = f"nmt/metrics/{NMTPlanner.SIDE_CELL}.tsv"
    NMT_FREQUENCIES = f"nmt/frequencies/{NMTPlanner.SIDE_CELL}.tsv"
    CORRELATION = "tables/analysis/correlation.{ext}"
    CORRELATION_RANKING = "tables/analysis/correlation_ranking.{ext}"
    CORRELATION_PLOT = "plots/analysis/correlation.png"
    #: the per-seed cells table the correlation reads (csv) and what it left out (json)
    CORRELATION_CELLS = "tables/analysis/correlation_cells.{ext}"
    CORRELATION_MIXED = "tables/analysis/correlation_mixed.{ext}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner, nmt: NMTPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        self.nmt = nmt
        section = self.section.get("correlation")
        if section not in (None, False) and not {"models", "nmt"} & set(study.config):
            raise TokstudyError(
                "config key analyses.correlation: the study has no downstream stage "
                "(a models: or nmt: section) to correlate intrinsic metrics with"
            )
        self._check_parity()
        self._check_udhr()
        for language, word_list in sorted(self._words().items()):
            if language not in study.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.segmentation.words.{language}: not in languages"
                )
            if not word_list:
                raise TokstudyError(f"config key analyses.segmentation.words.{language} is empty")
        self._check_multilingual()

    @property
    def section(self) -> dict[str, Any]:
        """The ``analyses`` section (empty when absent)."""
        return self.study.config.get("analyses") or {}

    def segmentation_languages(self) -> list[str]:
        """Languages with a word list for the segmentation table."""
        words = (self.section.get("segmentation") or {}).get("words") or {}
        return sorted(language for language in words if language in self.study.config["languages"])

    def segmentation_jobs(self, language: str) -> list[Job]:
        """Jobs shown in a language's segmentation table: the chosen size, plus unsized and
        pretrained ones."""
        size = str((self.section.get("segmentation") or {}).get("vocab_size", ""))
        return [
            j
            for j in self.tokenizers.scored_jobs()
            if j.language == language and j.size in (size, FULL_SIZE_LABEL, PRETRAINED)
        ]

    def parity_language(self, role: str) -> str | None:
        """The ``reference`` or ``target`` language of the parity analysis (``None`` without)."""
        return (self.section.get("parity") or {}).get(role)

    def parity_texts(self) -> dict[str, str]:
        """``reference_text`` and ``target_text``: the held-out corpora the line-aligned
        parity compares (none without ``analyses.parity.target``)."""
        if not self.parity_language("target"):
            return {}
        return {
            f"{role}_text": self.study.out(CorporaPlanner.HELDOUT, language=language)
            for role in ("reference", "target")
            for language in [self.parity_language(role)]
        }

    def parity_pairs(self) -> list[tuple[Job, Job]]:
        """(reference job, target job) for every tokenizer and size both parity languages train."""
        parity = self.section.get("parity") or {}
        if "target" not in parity:
            return []
        scored = self.tokenizers.scored_jobs()
        targets = {(j.tokenizer, j.size): j for j in scored if j.language == parity["target"]}
        return [
            (j, targets[(j.tokenizer, j.size)])
            for j in scored
            if j.language == parity["reference"] and (j.tokenizer, j.size) in targets
        ]

    def parity_files(self) -> dict[str, Path]:
        """PUD CoNLL-U file of each language of the multi-parallel parity, sorted by code.

        The languages are the reference and ``analyses.parity.languages``, or every PUD
        language under ``pud_root``; empty without ``pud_root``.
        """
        parity = self.section.get("parity") or {}
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

    def _trained(self, job: Job) -> ParityTokenizer:
        """A tokenizer trained per language, for a parity: it covers its language."""
        name = job.tokenizer if job.size == FULL_SIZE_LABEL else f"{job.tokenizer} {job.size}"
        return ParityTokenizer(name, "trained", self.tokenizers.tokenizer_dir(job), (job.language,))

    def _multilingual(self, job: Job, languages: tuple[str, ...]) -> ParityTokenizer:
        """A multilingual tokenizer, for a parity, covering ``languages``."""
        return ParityTokenizer(
            f"{job.tokenizer} {job.size} ({job.language})",
            "multilingual",
            self.study.out(self.MULTILINGUAL_TOKENIZER, **vars(job)),
            languages,
        )

    def parity_tokenizers(self) -> list[ParityTokenizer]:
        """The tokenizers the multi-parallel parity scores, each with the parity languages
        it covers: a tokenizer trained per language covers that language, a multilingual
        one all of its languages, a pretrained one every parity language (or those of its
        ``languages`` list). Empty without ``analyses.parity.pud_root``."""
        languages = set(self.parity_files())
        entries = [self._trained(j) for j in self.tokenizers.jobs() if j.language in languages]
        covered = tuple(sorted(languages & set(self.multilingual_languages())))
        entries += [self._multilingual(j, covered) for j in self.multilingual_jobs() if covered]
        for name in self.tokenizers.pretrained_names():
            listed = self.tokenizers.pretrained[name].get("languages")
            reach = tuple(sorted(languages & set(listed))) if listed else tuple(sorted(languages))
            if reach:
                directory = self.tokenizers.pretrained_dir(name)
                entries.append(ParityTokenizer(name, "pretrained", directory, reach))
        return entries

    def multilingual_languages(self) -> list[str]:
        """Languages of the multilingual tokenizers (default: all), sorted; empty without."""
        section = self.section.get("multilingual")
        if section is None:
            return []
        return sorted(set(section.get("languages", self.study.languages)))

    def multilingual_jobs(self) -> list[Job]:
        """One job per multilingual tokenizer and size; its language is the mix (``bn+en``)."""
        section = self.section.get("multilingual")
        if section is None:
            return []
        label = "+".join(self.multilingual_languages())
        return [
            Job(label, tokenizer, str(size))
            for tokenizer in sorted(set(section["tokenizers"]))
            for size in sorted(set(section["vocab_sizes"]))
        ]

    def multilingual_comparisons(self) -> list[Job]:
        """Pretrained tokenizers scored on every multilingual language: they appear in the
        multilingual tables beside the tokenizers trained on the mix."""
        languages = set(self.multilingual_languages())
        return [
            Job("+".join(sorted(languages)), name, PRETRAINED)
            for name in self.tokenizers.pretrained_names()
            if languages and languages <= set(self.tokenizers.pretrained_languages(name))
        ]

    def multilingual_spec(self, tokenizer: str, size: str) -> dict[str, Any]:
        """Training settings of one multilingual tokenizer: its study params, if any."""
        return self.tokenizers.train_spec(
            Job("+".join(self.multilingual_languages()), tokenizer, size)
        )

    def multilingual_cost_sources(self) -> list[dict[str, Any]]:
        """The cost table's ``train_multilingual`` row of each multilingual tokenizer (its
        benchmark file, and the mixed text it read; see
        :meth:`tokstudy.study.metrics.MetricsPlanner.cost_sources`)."""
        out = self.study.out
        benchmark = benchmark_path("train_multilingual_tokenizer", self.MULTILINGUAL_CELL)
        return [
            {"language": job.language, "tokenizer": job.tokenizer, "size": job.size}
            | {"step": "train_multilingual", "figures": out(benchmark, **vars(job))}
            | {"texts": [out(self.MULTILINGUAL_TRAIN)]}
            for job in self.multilingual_jobs()
        ]

    def multilingual_sampling(self) -> dict[str, Any]:
        """How the mixed training text is drawn: ``temperature``, ``seed``, ``total_lines``
        (empty without multilingual tokenizers)."""
        section = self.section.get("multilingual")
        if section is None:
            return {}
        return {
            "temperature": float(section["temperature"]),
            "seed": self.study.seed,
            "total_lines": section.get("total_lines"),
        }

    def correlation(self) -> dict[str, Any] | None:
        """Settings of the correlation analysis, or ``None`` when it does not run.

        On by default whenever the study has a downstream stage (``models:`` or ``nmt:``):
        ``analyses.correlation`` absent or ``true`` → default settings, a mapping → those
        settings, ``false`` → off.
        """
        section = self.section.get("correlation", True)
        if section is False or not {"models", "nmt"} & set(self.study.config):
            return None
        return {} if section is True else dict(section)

    def _words(self) -> dict[str, list[str]]:
        return (self.section.get("segmentation") or {}).get("words") or {}

    def segmentation_words(self, language: str) -> list[str]:
        """The words whose segmentations a language's table shows."""
        return self._words()[language]

    def _check_parity(self) -> None:
        study = self.study
        parity = self.section.get("parity") or {}
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
        for entry in self.parity_tokenizers():
            covered.setdefault(entry.label, set()).update(entry.languages)
        if not any(parity["reference"] in langs and len(langs) > 1 for langs in covered.values()):
            raise TokstudyError(
                f"{PARITY_KEY}: no tokenizer of the study covers {parity['reference']!r} and "
                f"another language of the parallel corpus ({', '.join(self.parity_files())})"
            )

    def _check_multilingual(self) -> None:
        section = self.section.get("multilingual")
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

    def correlation_settings(self) -> dict[str, Any]:
        """What the correlation rule resamples with: the study's seed and the section."""
        return {"seed": self.study.seed, **(self.correlation() or {})}

    @property
    def correlation_nmt_side(self) -> str:
        """The NMT side whose tokenizers' metrics the NMT cells take."""
        return (self.correlation() or {}).get("nmt_side", CorrelationSettings.nmt_side)

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
                self.study.out(
                    self.NMT_METRICS,
                    side=sides[run.direction],
                    tokenizer=run.tokenizer,
                    size=run.size,
                )
                for run in self.nmt.runs()
                if run.direction in sides
            }
        )

    def targets(self) -> list[str]:
        """The tables and plots of every analysis the study asks for (correlation apart)."""
        ud = self.section.get("ud_root")
        parity_pud = bool(self.parity_files())
        multilingual = bool(self.multilingual_jobs())
        tables, plots = ["csv", "md"], ["png", "pdf"]
        patterns = [
            *expand(self.SEGMENTATION, language=self.segmentation_languages(), ext=tables),
            *expand(self.MORPHOLOGICAL_ALIGNMENT, ext=tables if ud else []),
            *expand(self.PARITY, ext=tables if self.parity_pairs() else []),
            *expand(self.PARITY_PUD, ext=tables if parity_pud else []),
            *expand(self.PARITY_PUD_FAIRNESS, ext=tables if parity_pud else []),
            *expand(
                self.PARITY_PUD_PLOT, plot=["heatmap", "bars"], ext=plots if parity_pud else []
            ),
            *expand(
                self.MULTILINGUAL_TABLE,
                table=["vocabulary_share", "fertility"],
                ext=tables if multilingual else [],
            ),
            *expand(self.MULTILINGUAL_PLOT, ext=plots if multilingual else []),
            *self.udhr_targets(),
        ]
        return [self.study.out(pattern) for pattern in patterns]

    def correlation_targets(self) -> list[str]:
        """The correlation tables and plot (none when the analysis does not run)."""
        if self.correlation() is None:
            return []
        patterns = [
            *expand(self.CORRELATION, ext=["csv", "md"]),
            *expand(self.CORRELATION_RANKING, ext=["csv", "md"]),
            self.CORRELATION_PLOT,
            *expand(self.CORRELATION_CELLS, ext=["csv", "json"]),
            *expand(self.CORRELATION_MIXED, ext=["csv", "md"]),
        ]
        return [self.study.out(pattern) for pattern in patterns]

    # --- UDHR parity (analyses.parity.udhr) ---------------------------------------------------

    def udhr_section(self) -> dict[str, Any]:
        """``analyses.parity.udhr`` (empty without)."""
        return (self.section.get("parity") or {}).get("udhr") or {}

    def udhr_root(self) -> Path | None:
        """The UDHR folder (relative to the base folder), or ``None`` without."""
        section = self.udhr_section()
        if not section:
            return None
        root = Path(section["root"])
        return root if root.is_absolute() else self.study.base / root

    def udhr_reference(self) -> str | None:
        """The translation every other is compared with (``None`` without)."""
        return self.udhr_section().get("reference")

    def udhr_index(self) -> str | None:
        """The UDHR folder's ``index.tsv`` (``None`` without)."""
        root = self.udhr_root()
        return None if root is None else str(root / INDEX_FILE)

    def udhr_files(self) -> dict[str, str]:
        """HTML file of each translation compared, by code (sorted): the reference and
        ``languages`` (file or ISO 639-3 codes), or every translation; empty without."""
        root = self.udhr_root()
        if root is None:
            return {}
        key = f"{PARITY_KEY}.udhr"
        codes = select_codes(
            read_index(root), self.udhr_section().get("languages"), self.udhr_reference(), key
        )
        return {code: str(translation_file(root, code)) for code in codes}

    def udhr_article_one_files(self) -> dict[str, str]:
        """For the study page: the HTML file of each study language's first UDHR
        translation among those compared (its article 1 is shown), by language; empty
        without a UDHR parity."""
        root, files = self.udhr_root(), self.udhr_files()
        if root is None:
            return {}
        index = read_index(root)
        chosen = {}
        for language in self.study.languages:
            codes = [code for code in translations_of(index, language) if code in files]
            if codes:
                chosen[language] = files[codes[0]]
        return chosen

    def udhr_tokenizers(self) -> list[ParityTokenizer]:
        """Every tokenizer of the study, for the UDHR parity: a tokenizer trained per
        language with that language, a multilingual one with its languages, a pretrained
        one with every translation (:data:`~tokstudy.analysis.udhr.EVERY_TRANSLATION`).
        The step finds their translations and records who is left out; empty without."""
        if self.udhr_root() is None:
            return []
        entries = [self._trained(j) for j in self.tokenizers.jobs()]
        languages = tuple(self.multilingual_languages())
        entries += [self._multilingual(j, languages) for j in self.multilingual_jobs()]
        entries += [
            ParityTokenizer(
                name, "pretrained", self.tokenizers.pretrained_dir(name), EVERY_TRANSLATION
            )
            for name in self.tokenizers.pretrained_names()
        ]
        return entries

    def udhr_tokenizer_dirs(self) -> list[str]:
        """The directories of the tokenizers that take part (the rule's inputs), sorted."""
        root = self.udhr_root()
        if root is None:
            return []
        coverage = udhr_coverage(
            [vars(entry) for entry in self.udhr_tokenizers()],
            read_index(root),
            list(self.udhr_files()),
            self.udhr_reference(),
            {"skipped_tokenizers": {}},
        )
        return sorted({str(path) for group in coverage.values() for path in group.values()})

    def udhr_targets(self) -> list[str]:
        """The UDHR parity's tables and plots (patterns; none without)."""
        if self.udhr_root() is None:
            return []
        tables = [self.PARITY_UDHR, self.PARITY_UDHR_FAIRNESS, self.PARITY_UDHR_SCRIPTS]
        return [
            *[path for pattern in tables for path in expand(pattern, ext=["csv", "md"])],
            *expand(self.PARITY_UDHR_PLOT, plot=list(self.udhr_plots), ext=["png", "pdf"]),
        ]

    def _check_udhr(self) -> None:
        """A bad UDHR folder, reference or ``languages`` code, or no tokenizer covering the
        reference and another translation, stops the study at start (one line)."""
        root = self.udhr_root()
        if root is None:
            return
        if not root.is_dir():
            raise TokstudyError(f"{PARITY_KEY}.udhr.root: no folder {root}")
        self.udhr_tokenizer_dirs()
