"""The planner of the ``languages:`` and ``corpus_defaults:`` sections: the prepared
corpora of the study, their sources, settings, paths and targets."""

from __future__ import annotations

import glob
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.corpora.ud import treebank_files
from tokstudy.errors import TokstudyError
from tokstudy.workflow.study.checks import registered_adapter

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner


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


class CorporaPlanner:
    """``languages`` and ``corpus_defaults``: the prepared corpora of the study."""

    #: a download, named by its checksum (lower case)
    DOWNLOAD = "downloads/{sha256}.raw"
    TRAIN = "corpora/{language}/train.txt"
    HELDOUT = "corpora/{language}/heldout.txt"
    STATS = "corpora/{language}/stats.json"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        for language in study.languages:
            self.source_files(language)
            for name in sorted(self.language_entry(language).get("tokenizer_params") or {}):
                registered_adapter(
                    f"config key languages.{language}.tokenizer_params.{name}", name, study.config
                )

    def language_entry(self, language: str) -> dict[str, Any]:
        """The config entry of one language (an empty one means: a file under data_root)."""
        return self.study.config["languages"][language] or {}

    def corpus_setting(self, language: str, key: str) -> Any:
        """A corpus setting, taken from the language entry or from ``corpus_defaults``."""
        return self.language_entry(language).get(key, self.study.config["corpus_defaults"][key])

    def source_files(self, language: str) -> list[Path]:
        """Raw input files of a language: a local file or the shards of a glob, a UD
        treebank's CoNLL-U files, chatterbot YAML files, a download, the files of a saved
        ``datasets`` dataset, or none (a Hub dataset, streamed)."""
        config = self.study.config
        entry = self.language_entry(language)
        self._check_format(language, entry)
        if "dataset" in entry:
            return self._dataset_files(language, entry["dataset"])
        if "ud" in entry:
            return self._treebank_sources(language, Path(entry["ud"]))
        if "chatterbot" in entry:
            return chatterbot_files(entry["chatterbot"])
        if "url" in entry:
            return [self.download_path(entry["sha256"])]
        data_root = config["data_root"]
        if "path" in entry:
            path, key = Path(entry["path"]), f"languages.{language}.path"
        elif data_root:
            pattern = config["corpus_defaults"]["file_pattern"]
            path, key = Path(pattern.format(language=language)), "corpus_defaults.file_pattern"
        else:
            raise TokstudyError(
                f"config key languages.{language}: give path, ud, url + sha256, chatterbot or "
                "dataset, or set data_root"
            )
        base = self.study.base
        if not path.is_absolute():
            path = (base / data_root / path) if data_root else (base / path)
        if glob.has_magic(str(path)):
            shards = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
            shards = [shard for shard in shards if shard.is_file()]
            if not shards:
                raise TokstudyError(f"config key {key}: no file matches {str(path)!r}")
            return shards
        if not path.is_file():
            raise TokstudyError(f"corpus of language {language!r}: file not found: {path}")
        return [path]

    def _check_format(self, language: str, entry: dict[str, Any]) -> None:
        """A ``file_format`` other than text only where the source is files of the user's."""
        given = entry.get("file_format")  # the language's own, not the default
        for key in ("ud", "chatterbot", "dataset"):
            if key in entry and given not in (None, "text"):
                raise TokstudyError(
                    f"config key languages.{language}.file_format: {given!r} does not apply to "
                    f"a {key} source (remove it)"
                )

    def _dataset_files(self, language: str, dataset: dict[str, Any]) -> list[Path]:
        """The files of a saved ``datasets`` dataset (its folder checked); none for a Hub
        dataset."""
        if "disk" not in dataset:
            return []
        folder = self._dataset_folder(dataset)
        markers = ("state.json", "dataset_dict.json")
        if not any((folder / marker).is_file() for marker in markers):
            raise TokstudyError(
                f"config key languages.{language}.dataset.disk: {folder} is not a dataset saved "
                "with datasets' save_to_disk (no state.json or dataset_dict.json)"
            )
        return sorted(path for path in folder.rglob("*") if path.is_file())

    def _dataset_folder(self, dataset: dict[str, Any]) -> Path:
        folder = Path(dataset["disk"])
        return folder if folder.is_absolute() else self.study.base / folder

    def source(self, language: str) -> dict[str, Any]:
        """How ``prepare_corpus`` reads the source files (or the dataset) of a language: the
        ``format`` (``file_format``), ``field`` and ``dataset`` of its
        :class:`~tokstudy.corpora.sources.CorpusSource`."""
        entry = self.language_entry(language)
        dataset = entry.get("dataset")
        if dataset is not None and "disk" in dataset:
            dataset = {**dataset, "disk": str(self._dataset_folder(dataset))}
        fmt = "text" if {"ud", "chatterbot", "dataset"} & set(entry) else None
        return {
            "format": fmt or self.corpus_setting(language, "file_format"),
            "field": self.corpus_setting(language, "field"),
            "dataset": dataset,
        }

    def download_path(self, sha256: str) -> Path:
        """Where a downloaded corpus is kept: named by its checksum, inside the study's
        ``results_dir`` (studies never share a download)."""
        return Path(self.study.out(self.DOWNLOAD, sha256=sha256.lower()))

    def download_source(self, sha256: str) -> tuple[str, str]:
        """(URL, languages joined by ``+``) of the download with this checksum."""
        languages = [
            language
            for language in self.study.languages
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
        folder = folder if folder.is_absolute() else self.study.base / folder
        files = treebank_files(folder)
        if not files:
            raise TokstudyError(
                f"config key languages.{language}.ud: no .conllu or .conllu.gz files in {folder}"
            )
        return files

    def settings(self, language: str) -> dict[str, Any]:
        """How ``prepare_corpus`` cleans and splits a language's corpus."""
        keys = (
            "heldout",
            "max_lines",
            "max_bytes",
            "take",
            "on_invalid_utf8",
            "max_line_bytes",
            "normalize",
        )
        return {key: self.corpus_setting(language, key) for key in keys} | {
            "checksums": self.corpus_checksums(language),
            "seed": self.study.seed,
            "source": self.source(language),
        }

    def targets(self) -> list[str]:
        """The prepared corpus (train, heldout, stats) of every language a cell scores."""
        languages = sorted({job.language for job in self.tokenizers.scored_cells()})
        return [
            self.study.out(pattern, language=language)
            for language in languages
            for pattern in (self.TRAIN, self.HELDOUT, self.STATS)
        ]
