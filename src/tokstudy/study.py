"""A study's configuration, resolved into what the workflow's rules need.

The Snakefile validates the config against ``workflow/schemas/config.schema.yaml`` and
then asks a :class:`Study` for job lists, input files and training specs. Keeping this
logic here (not in the ``.smk`` files) makes it testable without Snakemake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tokstudy.analysis.ud import pud_treebanks, treebank_files
from tokstudy.config_files import check_results_dir
from tokstudy.errors import TokstudyError
from tokstudy.metrics import check_metric_names
from tokstudy.models.config import ModelsConfig, from_mapping
from tokstudy.models.tsv import check_header
from tokstudy.tokenizers.registry import adapter_class

UNSIZED = "full"
#: where a study keeps its downloaded corpora, named by checksum: <results_dir>/downloads
DOWNLOAD_DIR = "downloads"
#: the language that gets silver POS labels (HanTa's German model) without a UD treebank
SILVER_LANGUAGE = "de"
#: sampling temperature of the multilingual tokenizers' mixed training text, unless configured
MULTILINGUAL_TEMPERATURE = 5.0
MULTILINGUAL_KEY = "config key analyses.multilingual"
#: size label of a pretrained tokenizer's cells (its vocabulary size is what it is)
PRETRAINED = "pretrained"
#: where a ``hub:`` tokenizer is downloaded to, inside results_dir (never without ``hub:``)
PRETRAINED_DOWNLOAD_DIR = "downloads/pretrained"
HUB_URL = "https://huggingface.co/{hub}/resolve/main/tokenizer.json"
_WILDCARD_NAME = re.compile(r"[a-z][a-z0-9_]*")
PARITY_KEY = "config key analyses.parity"


@dataclass(frozen=True)
class Job:
    """One (language, tokenizer, vocabulary size) cell of the study."""

    language: str
    tokenizer: str
    size: str


@dataclass(frozen=True)
class ParityTokenizer:
    """A tokenizer of the multi-parallel parity analysis: ``directory`` serves ``languages``.

    ``label`` names the tokenizer in the tables; a tokenizer trained per language has one
    entry per language under one label (``sp_bpe 1000``), a multilingual one a single
    entry for all its languages. ``kind``: ``trained`` or ``multilingual``.
    """

    label: str
    kind: str
    directory: str
    languages: tuple[str, ...]


def chatterbot_files(language_dir: str) -> list[Path]:
    """The YAML dialog files of one language of the installed ``chatterbot-corpus`` package."""
    folder = resources.files("chatterbot_corpus") / "data" / language_dir
    files = (
        sorted(Path(str(f)) for f in folder.iterdir() if f.name.endswith(".yml"))
        if folder.is_dir()
        else []
    )
    if not files:
        raise TokstudyError(f"chatterbot-corpus has no language folder {language_dir!r}")
    return files


class Study:
    """Resolves a validated config dictionary."""

    def __init__(self, config: dict[str, Any], base: Path = Path(".")) -> None:
        self.config = config
        self.base = Path(base)
        check_results_dir(self.results_dir, self.base)
        for name in config["tokenizers"]:
            adapter_class(name)
            self._check_tokenizer_languages(name)
        check_metric_names(config.get("metrics", []))
        for language in self.languages:
            self.source_files(language)
            self._check_tokenizer_params(language)
        if "models" in config:
            self.models_config()
        self._check_analyses()
        self._check_pretrained()

    def _check_tokenizer_params(self, language: str) -> None:
        for name in sorted(self.language_entry(language).get("tokenizer_params") or {}):
            try:
                adapter_class(name)
            except TokstudyError as exc:
                key = f"config key languages.{language}.tokenizer_params.{name}"
                raise TokstudyError(f"{key}: {exc}") from None

    @property
    def results_dir(self) -> str:
        """The folder of every output of the study."""
        return self.config.get("results_dir", "results")

    @property
    def languages(self) -> list[str]:
        """Language codes, sorted."""
        return sorted(self.config["languages"])

    @property
    def tokenizers(self) -> list[str]:
        """Tokenizer names, sorted."""
        return sorted(self.config["tokenizers"])

    def sizes(self, tokenizer: str) -> list[str]:
        """Vocabulary-size labels of a tokenizer (``full`` when the data sets the size)."""
        if not adapter_class(tokenizer).sized:
            return [UNSIZED]
        entry = self.config["tokenizers"][tokenizer] or {}
        sizes = entry.get("vocab_sizes", self.config.get("vocab_sizes"))
        if not sizes:
            raise TokstudyError(
                f"config key tokenizers.{tokenizer}.vocab_sizes (or vocab_sizes) is missing"
            )
        return [str(size) for size in sorted(set(sizes))]

    def tokenizer_languages(self, tokenizer: str) -> list[str]:
        """The languages a tokenizer is trained on: its ``languages`` key, else all."""
        entry = self.config["tokenizers"][tokenizer] or {}
        return sorted(entry.get("languages", self.languages))

    def _check_tokenizer_languages(self, tokenizer: str) -> None:
        for language in self.tokenizer_languages(tokenizer):
            if language not in self.config["languages"]:
                raise TokstudyError(
                    f"config key tokenizers.{tokenizer}.languages: {language!r} is not under "
                    f"languages (known: {', '.join(self.languages)})"
                )

    def jobs(self) -> list[Job]:
        """Every (language, tokenizer, size) of the study, in a stable order."""
        return [
            Job(language, tokenizer, size)
            for language in self.languages
            for tokenizer in self.tokenizers
            if language in self.tokenizer_languages(tokenizer)
            for size in self.sizes(tokenizer)
        ]

    def language_entry(self, language: str) -> dict[str, Any]:
        """The config entry of one language (an empty one means: a file under data_root)."""
        return self.config["languages"][language] or {}

    def corpus_setting(self, language: str, key: str) -> Any:
        """A corpus setting, taken from the language entry or from ``corpus_defaults``."""
        entry = self.language_entry(language)
        return entry.get(key, self.config.get("corpus_defaults", {}).get(key))

    def source_files(self, language: str) -> list[Path]:
        """Raw input files of a language: a local file, a UD treebank's CoNLL-U files,
        chatterbot YAML files or a download."""
        entry = self.language_entry(language)
        if "ud" in entry:
            return self._treebank_sources(language, Path(entry["ud"]))
        if "chatterbot" in entry:
            return chatterbot_files(entry["chatterbot"])
        if "url" in entry:
            return [self.download_path(entry["sha256"])]
        data_root = self.config.get("data_root")
        if "path" in entry:
            path = Path(entry["path"])
        elif data_root:
            pattern = self.config.get("corpus_defaults", {}).get(
                "file_pattern", "{language}.txt.gz"
            )
            path = Path(pattern.format(language=language))
        else:
            raise TokstudyError(
                f"config key languages.{language}: give path, ud, url + sha256 or chatterbot, "
                "or set data_root"
            )
        if not path.is_absolute():
            path = (self.base / data_root / path) if data_root else (self.base / path)
        if not path.is_file():
            raise TokstudyError(f"corpus of language {language!r}: file not found: {path}")
        return [path]

    def download_path(self, sha256: str) -> Path:
        """Where a downloaded corpus is kept: named by its checksum, inside the study's
        ``results_dir`` (studies never share a download)."""
        return Path(self.results_dir) / DOWNLOAD_DIR / f"{sha256.lower()}.raw"

    def download_source(self, sha256: str) -> tuple[str, str]:
        """(URL, languages joined by ``+``) of the download with this checksum."""
        languages = [
            language
            for language in self.languages
            if self.language_entry(language).get("sha256", "").lower() == sha256
        ]
        if not languages:
            raise TokstudyError(f"no language of the study has sha256 {sha256}")
        return self.language_entry(languages[0])["url"], "+".join(languages)

    def corpus_checksums(self, language: str) -> dict[str, str]:
        """Downloaded source file → its SHA-256, verified before the corpus is prepared."""
        entry = self.language_entry(language)
        if "url" not in entry:
            return {}
        return {str(self.download_path(entry["sha256"])): entry["sha256"].lower()}

    def _treebank_sources(self, language: str, folder: Path) -> list[Path]:
        folder = folder if folder.is_absolute() else self.base / folder
        files = treebank_files(folder)
        if not files:
            raise TokstudyError(
                f"config key languages.{language}.ud: no .conllu or .conllu.gz files in {folder}"
            )
        return files

    def train_spec(self, job: Job) -> dict[str, Any]:
        """JSON-able training settings of one job (also what triggers its rerun).

        A tokenizer or language the study does not list (one trained only for the NMT
        stage, or on a joint text) gets its registry defaults.
        """
        entry = self.config["tokenizers"].get(job.tokenizer) or {}
        params = dict(entry.get("params") or {})
        language_entry = self.config["languages"].get(job.language) or {}
        overrides = language_entry.get("tokenizer_params") or {}
        params.update(overrides.get(job.tokenizer) or {})
        return {
            "vocab_size": None if job.size == UNSIZED else int(job.size),
            "params": params,
            "seed": int(self.config.get("seed", 0)),
            "size_policy": self.config.get("size_policy", "error"),
            "label": job.language,
        }

    def frequency_plot_size(self) -> str:
        """The vocabulary size whose token-frequency distributions are plotted."""
        return str(self.config.get("plots", {}).get("frequency_vocab_size", ""))

    def frequency_plot_jobs(self, language: str) -> list[Job]:
        """Jobs of one language at the plotted size (sized tokenizers that train it), and the
        pretrained tokenizers scored on it."""
        size = self.frequency_plot_size()
        return [
            j for j in self.scored_jobs() if j.language == language and j.size in (size, PRETRAINED)
        ]

    def models_config(self) -> ModelsConfig:
        """The ``models:`` section, checked against what the study trains."""
        models = from_mapping(ModelsConfig, self.config.get("models"))
        for key, names, known in (
            ("languages", models.languages, self.languages),
            ("tokenizers", models.tokenizers, self.tokenizers),
        ):
            for name in names:
                if name not in known:
                    raise TokstudyError(
                        f"config key models.{key}: {name!r} is not trained by this study "
                        f"(trained: {', '.join(known)})"
                    )
        for tokenizer in models.tokenizers:
            for language in models.languages:
                if language not in self.tokenizer_languages(tokenizer):
                    raise TokstudyError(
                        f"config key models.languages: {tokenizer!r} is not trained on "
                        f"{language!r} (its tokenizers.{tokenizer}.languages)"
                    )
            trained = self.sizes(tokenizer)
            for size in models.vocab_sizes:
                if trained != [UNSIZED] and str(size) not in trained:
                    raise TokstudyError(
                        f"config key models.vocab_sizes: {size} is not trained for tokenizer "
                        f"{tokenizer!r} (trained: {', '.join(trained)})"
                    )
        for language in models.languages:
            self.treebank(models, language)
            self.sentence_tsv(models, language)
        for language in models.sentence_tsv:
            if language not in models.languages:
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}: not in models.languages"
                )
        return models

    def treebank(self, models: ModelsConfig, language: str) -> Path | None:
        """The UD treebank folder of a language, or ``None``: silver German labels (``de``)."""
        if not {"pos", "sentence"} & set(models.tasks):
            return None
        if language in models.treebanks:
            root = Path(models.ud_root)
            path = root if root.is_absolute() else self.base / root
            path = path / models.treebanks[language]
            if not path.is_dir():
                raise TokstudyError(f"config key models.treebanks.{language}: no folder {path}")
            return path
        if "sentence" in models.tasks and language not in models.sentence_tsv:
            raise TokstudyError(
                f"config key models.treebanks.{language} is missing: task sentence needs a UD "
                f"treebank with features (or models.sentence_tsv.{language})"
            )
        if "pos" in models.tasks and language != SILVER_LANGUAGE:
            raise TokstudyError(
                f"config key models.treebanks.{language} is missing: silver POS labels exist "
                f"only for German ({SILVER_LANGUAGE!r})"
            )
        return None

    def sentence_tsv(self, models: ModelsConfig, language: str) -> dict[str, Path]:
        """The TSV files (split → path) of a language's sentence task; empty: none given."""
        dataset = models.sentence_tsv.get(language)
        if dataset is None or "sentence" not in models.tasks:
            return {}
        files = {split: self.base / name for split, name in vars(dataset).items() if name}
        for split, path in files.items():
            if not path.is_file():
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}.{split}: no file {path}"
                )
            check_header(path)
        return files

    @property
    def analyses(self) -> dict[str, Any]:
        """The ``analyses`` section (empty when absent)."""
        return self.config.get("analyses") or {}

    def segmentation_languages(self) -> list[str]:
        """Languages with a word list for the segmentation table."""
        words = (self.analyses.get("segmentation") or {}).get("words") or {}
        return sorted(language for language in words if language in self.config["languages"])

    def segmentation_jobs(self, language: str) -> list[Job]:
        """Jobs shown in a language's segmentation table: the chosen size, plus unsized and
        pretrained ones."""
        size = str((self.analyses.get("segmentation") or {}).get("vocab_size", ""))
        return [
            j
            for j in self.scored_jobs()
            if j.language == language and j.size in (size, UNSIZED, PRETRAINED)
        ]

    def parity_pairs(self) -> list[tuple[Job, Job]]:
        """(reference job, target job) for every tokenizer and size both parity languages train."""
        parity = self.analyses.get("parity") or {}
        if "target" not in parity:
            return []
        scored = self.scored_jobs()
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
        parity = self.analyses.get("parity") or {}
        if "pud_root" not in parity:
            return {}
        root = Path(parity["pud_root"])
        folder = root if root.is_absolute() else self.base / root
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

    def parity_tokenizers(self) -> list[ParityTokenizer]:
        """The tokenizers the multi-parallel parity scores, each with the parity languages
        it covers: a tokenizer trained per language covers that language, a multilingual
        one all of its languages, a pretrained one every parity language (or those of its
        ``languages`` list). Empty without ``analyses.parity.pud_root``."""
        languages = set(self.parity_files())
        entries = [
            ParityTokenizer(
                j.tokenizer if j.size == UNSIZED else f"{j.tokenizer} {j.size}",
                "trained",
                self.tokenizer_dir(j),
                (j.language,),
            )
            for j in self.jobs()
            if j.language in languages
        ]
        covered = tuple(sorted(languages & set(self.multilingual_languages())))
        entries += [
            ParityTokenizer(
                f"{j.tokenizer} {j.size} ({j.language})",
                "multilingual",
                f"{self.results_dir}/multilingual/tokenizers/{j.tokenizer}/{j.size}",
                covered,
            )
            for j in self.multilingual_jobs()
            if covered
        ]
        for name in self.pretrained_names():
            listed = self.pretrained[name].get("languages")
            reach = tuple(sorted(languages & set(listed))) if listed else tuple(sorted(languages))
            if reach:
                directory = self.pretrained_dir(name)
                entries.append(ParityTokenizer(name, "pretrained", directory, reach))
        return entries

    def multilingual_languages(self) -> list[str]:
        """Languages of the multilingual tokenizers (default: all), sorted; empty without."""
        section = self.analyses.get("multilingual")
        if section is None:
            return []
        return sorted(set(section.get("languages", self.languages)))

    def multilingual_jobs(self) -> list[Job]:
        """One job per multilingual tokenizer and size; its language is the mix (``bn+en``)."""
        section = self.analyses.get("multilingual")
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
            for name in self.pretrained_names()
            if languages and languages <= set(self.pretrained_languages(name))
        ]

    def multilingual_spec(self, tokenizer: str, size: str) -> dict[str, Any]:
        """Training settings of one multilingual tokenizer: its study params, if any."""
        return self.train_spec(Job("+".join(self.multilingual_languages()), tokenizer, size))

    def multilingual_sampling(self) -> dict[str, Any]:
        """How the mixed training text is drawn: ``temperature``, ``seed``, ``total_lines``."""
        section = self.analyses.get("multilingual") or {}
        return {
            "temperature": float(section.get("temperature", MULTILINGUAL_TEMPERATURE)),
            "seed": int(self.config.get("seed", 0)),
            "total_lines": section.get("total_lines"),
        }

    def _check_multilingual(self) -> None:
        section = self.analyses.get("multilingual")
        if section is None:
            return
        for key in ("languages", "tokenizers", "vocab_sizes"):
            if key in section and not section[key]:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.{key} is empty")
        for key in ("tokenizers", "vocab_sizes"):
            if key not in section:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.{key} is missing")
        self._check_multilingual_languages(section.get("languages", self.languages))
        for tokenizer in section["tokenizers"]:
            _check_multilingual_tokenizer(tokenizer)
        for size in section["vocab_sizes"]:
            if size < 2:
                raise TokstudyError(f"{MULTILINGUAL_KEY}.vocab_sizes: {size} is below 2")
        for key in ("temperature", "total_lines"):
            if key in section and section[key] <= 0:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.{key} must be positive, got {section[key]}"
                )

    def _check_multilingual_languages(self, languages: list[str]) -> None:
        for language in languages:
            if language not in self.config["languages"]:
                raise TokstudyError(
                    f"{MULTILINGUAL_KEY}.languages: language {language!r} is not in languages"
                )
        if len(set(languages)) < 2:
            raise TokstudyError(
                f"{MULTILINGUAL_KEY}.languages: a multilingual tokenizer needs at least two "
                f"languages, got {', '.join(sorted(set(languages)))}"
            )

    def correlation(self) -> dict[str, Any] | None:
        """Settings of the correlation analysis, or ``None`` when it does not run.

        On by default whenever the study has a downstream stage (``models:`` or ``nmt:``):
        ``analyses.correlation`` absent or ``true`` → default settings, a mapping → those
        settings, ``false`` → off.
        """
        section = self.analyses.get("correlation", True)
        if section is False or not {"models", "nmt"} & set(self.config):
            return None
        return {} if section is True else dict(section)

    def _check_parity(self) -> None:
        parity = self.analyses.get("parity") or {}
        for key in ("reference", "target"):
            if "target" in parity and parity[key] not in self.config["languages"]:
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

    def _check_analyses(self) -> None:
        section = self.analyses.get("correlation")
        if section not in (None, False) and not {"models", "nmt"} & set(self.config):
            raise TokstudyError(
                "config key analyses.correlation: the study has no downstream stage "
                "(a models: or nmt: section) to correlate intrinsic metrics with"
            )
        self._check_parity()
        words = (self.analyses.get("segmentation") or {}).get("words") or {}
        for language, word_list in sorted(words.items()):
            if language not in self.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.segmentation.words.{language}: not in languages"
                )
            if not word_list:
                raise TokstudyError(f"config key analyses.segmentation.words.{language} is empty")
        self._check_multilingual()

    @property
    def pretrained(self) -> dict[str, Any]:
        """The ``pretrained`` section (empty when absent)."""
        return self.config.get("pretrained") or {}

    def pretrained_names(self) -> list[str]:
        """Names of the pretrained tokenizers, sorted."""
        return sorted(self.pretrained)

    def is_pretrained(self, tokenizer: str) -> bool:
        """Whether a tokenizer name is a pretrained one (scored, never trained)."""
        return tokenizer in self.pretrained

    def pretrained_languages(self, name: str) -> list[str]:
        """The languages a pretrained tokenizer is scored on: its ``languages``, else all."""
        return sorted(self.pretrained[name].get("languages") or self.languages)

    def scored_jobs(self) -> list[Job]:
        """Every cell that gets metrics: the trained jobs, then one cell (size label
        ``pretrained``) per pretrained tokenizer and language it is scored on."""
        return self.jobs() + [
            Job(language, name, PRETRAINED)
            for language in self.languages
            for name in self.pretrained_names()
            if language in self.pretrained_languages(name)
        ]

    def pretrained_dir(self, name: str) -> str:
        """The tokstudy directory a pretrained tokenizer is imported into."""
        return f"{self.results_dir}/pretrained/{name}"

    def tokenizer_dir(self, job: Job) -> str:
        """The tokenizer directory of any scored cell (trained or pretrained)."""
        if job.size == PRETRAINED:
            return self.pretrained_dir(job.tokenizer)
        return f"{self.results_dir}/tokenizers/{job.language}/{job.tokenizer}/{job.size}"

    def pretrained_source(self, name: str) -> Path:
        """The file or folder a pretrained tokenizer is read from: its ``path`` (relative to
        the study's base folder), else the file its ``hub:`` download rule writes."""
        entry = self.pretrained[name]
        if "path" not in entry:
            return Path(self.results_dir) / PRETRAINED_DOWNLOAD_DIR / name / "tokenizer.json"
        path = Path(entry["path"])
        return path if path.is_absolute() else self.base / path

    def pretrained_hub_url(self, name: str) -> str:
        """The download address of a ``hub:`` tokenizer's ``tokenizer.json``."""
        return HUB_URL.format(hub=self.pretrained[name]["hub"])

    def _check_pretrained(self) -> None:
        for name in self.pretrained_names():
            key = f"config key pretrained.{name}"
            entry = self.pretrained[name]
            if name in self.config["tokenizers"]:
                raise TokstudyError(f"{key}: the name is also a trained tokenizer; rename one")
            if not _WILDCARD_NAME.fullmatch(name):
                raise TokstudyError(
                    f"{key}: a name is lower-case letters, digits and _, starting with a letter"
                )
            for language in entry.get("languages") or []:
                if language not in self.config["languages"]:
                    raise TokstudyError(f"{key}.languages: {language!r} is not in languages")
            if "path" not in entry and "hub" not in entry:
                raise TokstudyError(f"{key}: give path (a local file or folder) or hub")
            if "path" not in entry and not entry.get("sha256"):
                raise TokstudyError(f"{key}: a hub download needs sha256")
            if "path" in entry and not self.pretrained_source(name).exists():
                raise TokstudyError(f"{key}.path: no such file or folder {entry['path']}")


def _check_multilingual_tokenizer(name: str) -> None:
    try:
        sized = adapter_class(name).sized
    except TokstudyError as exc:
        raise TokstudyError(f"{MULTILINGUAL_KEY}.tokenizers: {exc}") from None
    if not sized:
        raise TokstudyError(
            f"{MULTILINGUAL_KEY}.tokenizers: {name!r} has no vocabulary size (the data sets "
            "it); choose a sized tokenizer"
        )
