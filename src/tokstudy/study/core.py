"""A study's configuration, resolved once into what the workflow's rules need.

The Snakefile validates the config against ``workflow/schemas/config.schema.yaml``
(shapes only) and builds one :class:`Study`: it fills in the defaults
(:mod:`tokstudy.study.defaults`), answers its languages and their corpus sources, fills
in path patterns (:meth:`Study.out`) and holds one planner per section in
:attr:`Study.plan`, which check their section against the rest of the study and own its
cells, paths and targets (the cells of the study: the tokenizers planner).
Keeping this logic here (not in the ``.smk`` files) makes it testable without Snakemake.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from tokstudy.analysis.ud import treebank_files
from tokstudy.errors import TokstudyError
from tokstudy.results_dir import check_results_dir
from tokstudy.study.corpora import CorporaPlanner
from tokstudy.study.defaults import with_defaults
from tokstudy.study.metrics import MetricsPlanner
from tokstudy.study.paths import fill
from tokstudy.study.planners import StudyPlan


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
    """A validated config dictionary, resolved: defaults filled in, every section checked.

    ``plan`` holds the section planners (:class:`~tokstudy.study.planners.StudyPlan`).
    """

    def __init__(self, config: dict[str, Any], base: Path = Path(".")) -> None:
        self.config = with_defaults(config)
        self.base = Path(base)
        check_results_dir(self.results_dir, self.base)
        self.plan = StudyPlan(self)

    @property
    def results_dir(self) -> str:
        """The folder of every output of the study."""
        return self.config["results_dir"]

    def out(self, pattern: str, **values: Any) -> str:
        """A planner's path pattern under the results folder, with ``values`` filled in."""
        return f"{self.results_dir}/{fill(pattern, **values)}"

    def cell_costs(self) -> Path:
        """The cost table whose measured cell costs order the cell jobs
        (:mod:`tokstudy.cell_priority`): key ``cell_costs``, else the study's own."""
        given = self.config["cell_costs"]
        if given is None:
            return Path(self.out(MetricsPlanner.COST_TABLE))
        path = Path(given) if Path(given).is_absolute() else self.base / given
        if not path.is_file():
            raise TokstudyError(f"config key cell_costs: file not found: {path}")
        return path

    @property
    def seed(self) -> int:
        """The seed of every random choice of the study."""
        return int(self.config["seed"])

    @property
    def languages(self) -> list[str]:
        """Language codes, sorted."""
        return sorted(self.config["languages"])

    @property
    def tokenizers(self) -> list[str]:
        """Tokenizer names, sorted."""
        return sorted(self.config["tokenizers"])

    def language_entry(self, language: str) -> dict[str, Any]:
        """The config entry of one language (an empty one means: a file under data_root)."""
        return self.config["languages"][language] or {}

    def corpus_setting(self, language: str, key: str) -> Any:
        """A corpus setting, taken from the language entry or from ``corpus_defaults``."""
        return self.language_entry(language).get(key, self.config["corpus_defaults"][key])

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
        data_root = self.config["data_root"]
        if "path" in entry:
            path = Path(entry["path"])
        elif data_root:
            pattern = self.config["corpus_defaults"]["file_pattern"]
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
        return Path(self.out(CorporaPlanner.DOWNLOAD, sha256=sha256.lower()))

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
