"""A study's configuration, resolved once into what the workflow's rules need.

The Snakefile validates the config against ``workflow/schemas/config.schema.yaml``
(shapes only) and builds one :class:`Study`: it fills in the defaults
(:mod:`tokstudy.study.defaults`), answers the cells of the study (job lists, tokenizer
directories, training specs) and holds one planner per section in :attr:`Study.plan`,
which check their section against the rest of the study and own its paths and targets.
Keeping this logic here (not in the ``.smk`` files) makes it testable without Snakemake.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from tokstudy.analysis.ud import pud_treebanks, treebank_files
from tokstudy.cells import PRETRAINED, UNSIZED, Job, ParityTokenizer
from tokstudy.config_files import check_results_dir
from tokstudy.errors import TokstudyError
from tokstudy.study.defaults import with_defaults
from tokstudy.study.planners import StudyPlan
from tokstudy.tokenizers.registry import adapter_class

#: where a study keeps its downloaded corpora, named by checksum: <results_dir>/downloads
DOWNLOAD_DIR = "downloads"
#: where a ``hub:`` tokenizer is downloaded to, inside results_dir (never without ``hub:``)
PRETRAINED_DOWNLOAD_DIR = "downloads/pretrained"
HUB_URL = "https://huggingface.co/{hub}/resolve/main/tokenizer.json"
PARITY_KEY = "config key analyses.parity"


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
            "seed": self.seed,
            "size_policy": self.config["size_policy"],
            "label": job.language,
        }

    def frequency_plot_size(self) -> str:
        """The vocabulary size whose token-frequency distributions are plotted."""
        return str(self.config["plots"].get("frequency_vocab_size", ""))

    def frequency_plot_jobs(self, language: str) -> list[Job]:
        """Jobs of one language at the plotted size (sized tokenizers that train it), and the
        pretrained tokenizers scored on it."""
        size = self.frequency_plot_size()
        return [
            j for j in self.scored_jobs() if j.language == language and j.size in (size, PRETRAINED)
        ]

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
        """How the mixed training text is drawn: ``temperature``, ``seed``, ``total_lines``
        (empty without multilingual tokenizers)."""
        section = self.analyses.get("multilingual")
        if section is None:
            return {}
        return {
            "temperature": float(section["temperature"]),
            "seed": self.seed,
            "total_lines": section.get("total_lines"),
        }

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
