"""A study's configuration, resolved into what the workflow's rules need.

The Snakefile validates the config against ``workflow/schemas/config.schema.yaml`` and
then asks a :class:`Study` for job lists, input files and training specs. Keeping this
logic here (not in the ``.smk`` files) makes it testable without Snakemake.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError
from tokstudy.metrics import check_metric_names
from tokstudy.models.config import ModelsConfig, from_mapping
from tokstudy.tokenizers.registry import adapter_class

UNSIZED = "full"
DOWNLOAD_DIR = "resources/downloads"
#: the language that gets silver POS labels (HanTa's German model) without a UD treebank
SILVER_LANGUAGE = "de"


@dataclass(frozen=True)
class Job:
    """One (language, tokenizer, vocabulary size) cell of the study."""

    language: str
    tokenizer: str
    size: str


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
        for name in config["tokenizers"]:
            adapter_class(name)
        check_metric_names(config.get("metrics", []))
        for language in self.languages:
            self.source_files(language)
        if "models" in config:
            self.models_config()
        self._check_analyses()

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

    def jobs(self) -> list[Job]:
        """Every (language, tokenizer, size) of the study, in a stable order."""
        return [
            Job(language, tokenizer, size)
            for language in self.languages
            for tokenizer in self.tokenizers
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
        """Raw input files of a language: a local file, chatterbot YAML files or a download."""
        entry = self.language_entry(language)
        if "chatterbot" in entry:
            return chatterbot_files(entry["chatterbot"])
        if "url" in entry:
            return [Path(DOWNLOAD_DIR) / f"{language}.raw"]
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
                f"config key languages.{language}: give path, url + sha256 or chatterbot, "
                "or set data_root"
            )
        if not path.is_absolute():
            path = (self.base / data_root / path) if data_root else (self.base / path)
        if not path.is_file():
            raise TokstudyError(f"corpus of language {language!r}: file not found: {path}")
        return [path]

    def train_spec(self, job: Job) -> dict[str, Any]:
        """JSON-able training settings of one job (also what triggers its rerun)."""
        entry = self.config["tokenizers"][job.tokenizer] or {}
        params = dict(entry.get("params") or {})
        overrides = self.language_entry(job.language).get("tokenizer_params") or {}
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
        """Jobs of one language at the plotted size (sized tokenizers that train it)."""
        size = self.frequency_plot_size()
        return [j for j in self.jobs() if j.language == language and j.size == size]

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
            trained = self.sizes(tokenizer)
            for size in models.vocab_sizes:
                if trained != [UNSIZED] and str(size) not in trained:
                    raise TokstudyError(
                        f"config key models.vocab_sizes: {size} is not trained for tokenizer "
                        f"{tokenizer!r} (trained: {', '.join(trained)})"
                    )
        for language in models.languages:
            self.treebank(models, language)
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
        if "sentence" in models.tasks:
            raise TokstudyError(
                f"config key models.treebanks.{language} is missing: task sentence needs a UD "
                "treebank with features"
            )
        if language != SILVER_LANGUAGE:
            raise TokstudyError(
                f"config key models.treebanks.{language} is missing: silver POS labels exist "
                f"only for German ({SILVER_LANGUAGE!r})"
            )
        return None

    @property
    def analyses(self) -> dict[str, Any]:
        """The ``analyses`` section (empty when absent)."""
        return self.config.get("analyses") or {}

    def segmentation_languages(self) -> list[str]:
        """Languages with a word list for the segmentation table."""
        words = (self.analyses.get("segmentation") or {}).get("words") or {}
        return sorted(language for language in words if language in self.config["languages"])

    def segmentation_jobs(self, language: str) -> list[Job]:
        """Jobs shown in a language's segmentation table: the chosen size, plus unsized ones."""
        size = str((self.analyses.get("segmentation") or {}).get("vocab_size", ""))
        return [j for j in self.jobs() if j.language == language and j.size in (size, UNSIZED)]

    def parity_pairs(self) -> list[tuple[Job, Job]]:
        """(reference job, target job) for every tokenizer and size both parity languages train."""
        parity = self.analyses.get("parity") or {}
        if not parity:
            return []
        targets = {(j.tokenizer, j.size): j for j in self.jobs() if j.language == parity["target"]}
        return [
            (j, targets[(j.tokenizer, j.size)])
            for j in self.jobs()
            if j.language == parity["reference"] and (j.tokenizer, j.size) in targets
        ]

    def _check_analyses(self) -> None:
        parity = self.analyses.get("parity") or {}
        for key in ("reference", "target"):
            if parity and parity[key] not in self.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.parity.{key}: "
                    f"language {parity[key]!r} is not in languages"
                )
        words = (self.analyses.get("segmentation") or {}).get("words") or {}
        for language, word_list in sorted(words.items()):
            if language not in self.config["languages"]:
                raise TokstudyError(
                    f"config key analyses.segmentation.words.{language}: not in languages"
                )
            if not word_list:
                raise TokstudyError(f"config key analyses.segmentation.words.{language} is empty")
