"""What the workflow's model rules run: jobs, per-run paths and settings of a study."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tokstudy.models.config import ModelsConfig, to_dict
from tokstudy.study import UNSIZED, Job, Study

#: folder of one model run under the results folder
RUN = "models/runs/{language}/{tokenizer}/{size}/seed{seed}"
#: training corpus of a run: pretokenized, or CharacterBERT's vocabularies and words
PRETOKENIZED = "models/corpora/{language}/{tokenizer}/{size}"
CHARACTERBERT_CORPUS = "models/characterbert/{language}/{size}"
TOKENIZER = "tokenizers/{language}/{tokenizer}/{size}"
FINETUNE_TASKS = ("pos", "sentence")
#: the tokenizer column of CharacterBERT runs (its size is the word vocabulary size)
CHARACTERBERT = "characterbert"


class ModelPlan:
    """The ``models:`` section of a study resolved into rule inputs (empty without it)."""

    def __init__(self, study: Study, results: str) -> None:
        self.study = study
        self.results = results
        self.models: ModelsConfig | None = (
            study.models_config() if "models" in study.config else None
        )

    @property
    def config(self) -> ModelsConfig:
        """The models section (defaults when the study has none; then no job uses it)."""
        return self.models or ModelsConfig()

    def jobs(self) -> list[Job]:
        """Every (language, tokenizer, size) that gets models, in a stable order.

        With ``characterbert`` set, each language also gets a job of tokenizer
        ``characterbert`` whose size is its word vocabulary size.
        """
        if self.models is None:
            return []
        sizes = [str(size) for size in sorted(self.models.vocab_sizes)]
        characterbert = self.models.characterbert
        return [
            Job(language, tokenizer, size)
            for language in sorted(self.models.languages)
            for tokenizer in sorted(self.models.tokenizers)
            for size in (sizes if self.study.sizes(tokenizer) != [UNSIZED] else [UNSIZED])
        ] + [
            Job(language, CHARACTERBERT, str(characterbert.word_vocab_size))
            for language in (sorted(self.models.languages) if characterbert else [])
        ]

    def has_task(self, task: str) -> bool:
        """Whether the models section asks for a task (mlm, noise, pos, sentence)."""
        return self.models is not None and task in self.models.tasks

    def noise_levels(self) -> list[int]:
        """Noise levels of the evaluation (none unless the noise task is asked for)."""
        return list(self.config.evaluation.noise_levels) if self.has_task("noise") else []

    def evaluation(self) -> dict[str, Any]:
        """Evaluation settings with the noise levels that apply."""
        return {**to_dict(self.config.evaluation), "noise_levels": self.noise_levels()}

    def seeded(self, section: str, seed: str) -> dict[str, Any]:
        """``pretrain`` or ``finetune`` settings as a dict, with the run's seed."""
        return to_dict(replace(getattr(self.config, section), seed=int(seed)))

    def treebank(self, language: str) -> str:
        """The UD treebank folder of a language, else its silver treebank folder."""
        path = self.study.treebank(self.config, language)
        return str(path) if path else f"{self.results}/models/treebanks/{language}/silver"

    def finetune_data(self, wildcards: Any) -> dict[str, str]:
        """Data of a fine-tuning job: ``treebank``, or ``tsv_<split>`` files (sentence TSV)."""
        if wildcards.task == "sentence":
            files = self.study.sentence_tsv(self.config, wildcards.language)
            if files:
                return {f"tsv_{split}": str(path) for split, path in files.items()}
        return {"treebank": self.treebank(wildcards.language)}

    def tokenizer_dir(self, wildcards: Any) -> str | list[str]:
        """The tokenizer folder of a run; none for CharacterBERT, which spells words."""
        return [] if wildcards.tokenizer == CHARACTERBERT else self._path(TOKENIZER, wildcards)

    def corpus_dir(self, wildcards: Any) -> str:
        """The prepared training corpus of a run (pretokenized, or CharacterBERT's)."""
        characterbert = wildcards.tokenizer == CHARACTERBERT
        return self._path(CHARACTERBERT_CORPUS if characterbert else PRETOKENIZED, wildcards)

    def _path(self, pattern: str, wildcards: Any) -> str:
        """``pattern`` under the results folder, filled from a run's wildcards."""
        keys = ("language", "tokenizer", "size")
        return f"{self.results}/" + pattern.format(**{k: getattr(wildcards, k) for k in keys})

    def characterbert(self) -> dict[str, Any]:
        """CharacterBERT settings as a dict (empty without ``characterbert``)."""
        characterbert = self.config.characterbert
        return to_dict(characterbert) if characterbert else {}

    def run_path(self, name: str) -> str:
        """A file of one model run, with wildcards."""
        return f"{self.results}/{RUN}/{name}"

    def run_files(self, name: str, task: str | None = None) -> dict[str, dict[str, Any]]:
        """``name`` of every run (job × seed) with its key columns for the summary."""
        if self.models is None:
            return {}
        return {
            self.run_path(name).format(**vars(job), seed=seed): {
                "language": job.language,
                "tokenizer": job.tokenizer,
                "vocab_size": job.size,
                "seed": seed,
                **({"task": task} if task else {}),
            }
            for job in self.jobs()
            for seed in self.models.seeds
        }

    def mlm_files(self) -> dict[str, dict[str, Any]]:
        """The MLM metrics file of every run (none without the mlm task)."""
        return self.run_files("mlm.tsv") if self.has_task("mlm") else {}

    def finetune_files(self, name: str) -> dict[str, dict[str, Any]]:
        """``name`` (metrics.tsv, predictions.tsv) of every fine-tuning run with its keys."""
        return {
            path: keys
            for task in FINETUNE_TASKS
            if self.has_task(task)
            for path, keys in self.run_files(f"{task}/{name}", task).items()
        }

    def summary_tables(self) -> list[str]:
        """Names of the statistics tables the summary writes."""
        tables = ["seed_summary", "wilcoxon"]
        return tables + (["bootstrap"] if any(map(self.has_task, FINETUNE_TASKS)) else [])


def slurm_extras(config: dict[str, Any], rule_name: str) -> dict[str, Any]:
    """SLURM resources of a rule from config ``resources``: slurm_partition and gpu, if set."""
    entry = config.get("resources", {}).get(rule_name, {})
    return {key: entry[key] for key in ("slurm_partition", "gpu") if key in entry}
