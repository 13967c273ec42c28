"""The planner of the ``models:`` section: its checks against the study, jobs, per-run
paths and settings, and the tables it produces."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokstudy.cells import FULL_SIZE_LABEL, Cell, find_cell, make_cell
from tokstudy.errors import TokstudyError
from tokstudy.models.config import CLM_PRESETS, ClmScale, ModelsConfig, from_mapping, to_dict
from tokstudy.models.task_registry import TASKS, tasks_of_kind, tasks_reading
from tokstudy.models.tsv_datasets import check_header
from tokstudy.workflow.study.checks import check_listed
from tokstudy.workflow.study.paths import CELL, expand, fill

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

FINETUNE_TASKS = tasks_of_kind("finetune")
#: the tokenizer column of CharacterBERT runs (its size is the word vocabulary size)
CHARACTERBERT = "characterbert"
#: the language that gets silver POS labels (HanTa's German model) without a UD treebank
SILVER_LANGUAGE = "de"


class ModelsPlanner:
    """The ``models:`` section of a study resolved into rule inputs (empty without it)."""

    #: one model run: a cell and a seed
    RUN_CELL = f"{CELL}/seed{{seed}}"
    RUN = f"models/runs/{RUN_CELL}"
    PRETRAIN = f"{RUN}/pretrain"
    MLM = f"{RUN}/mlm.tsv"
    MLM_NOISE_EDITS = f"{RUN}/mlm_noise_edits.tsv"
    #: the causal LM of a run at a scale (task clm): its training folder and its scores
    CLM_CELL = f"{RUN_CELL}/clm/{{scale}}"
    CLM_RUN = f"{RUN}/clm/{{scale}}"
    CLM_TRAIN = f"{CLM_RUN}/train"
    CLM = f"{CLM_RUN}/clm.tsv"
    CLM_DETAILS = f"{CLM_RUN}/clm.json"
    #: one fine-tuning task of a run
    FINETUNE_CELL = f"{RUN_CELL}/{{task}}"
    FINETUNE_METRICS = f"{RUN}/{{task}}/metrics.tsv"
    FINETUNE_PREDICTIONS = f"{RUN}/{{task}}/predictions.tsv"
    FINETUNE_SUMMARY = f"{RUN}/{{task}}/finetune.json"
    #: training corpus of a run: pretokenized, or CharacterBERT's vocabularies and words
    PRETOKENIZED = f"models/corpora/{CELL}"
    #: a CharacterBERT corpus: its language and word vocabulary size
    CHARACTERBERT_CELL = "{language}/{size}"
    CHARACTERBERT_CORPUS = f"models/characterbert/{CHARACTERBERT_CELL}"
    SILVER_TREEBANK = "models/treebanks/{language}/silver"
    RESULTS_TABLE = "tables/models/results.tsv"
    SUMMARY_TABLE = "tables/models/{table}.{ext}"
    NOISE_PLOT = "plots/models/noise.{ext}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        self.models: ModelsConfig | None = None
        if "models" in study.config:
            self.models = from_mapping(ModelsConfig, study.config["models"])
            self._check(self.models)

    def _check(self, models: ModelsConfig) -> None:
        """The section against what the study trains, and its data files."""
        study = self.study
        for key, names, known in (
            ("languages", models.languages, study.languages),
            ("tokenizers", models.tokenizers, study.tokenizers),
        ):
            check_listed(
                names,
                known,
                f"config key models.{key}: {{name!r}} is not trained by this study "
                "(trained: {known})",
            )
        for tokenizer in models.tokenizers:
            for language in models.languages:
                if language not in self.tokenizers.tokenizer_languages(tokenizer):
                    raise TokstudyError(
                        f"config key models.languages: {tokenizer!r} is not trained on "
                        f"{language!r} (its tokenizers.{tokenizer}.languages)"
                    )
            trained = self.tokenizers.vocab_sizes(tokenizer)
            for size in models.vocab_sizes:
                if trained != [None] and size not in trained:
                    raise TokstudyError(
                        f"config key models.vocab_sizes: {size} is not trained for tokenizer "
                        f"{tokenizer!r} (trained: {', '.join(map(str, trained))})"
                    )
        for language in models.languages:
            self.treebank_folder(language)
            self.sentence_tsv(language)
        for language in models.sentence_tsv:
            if language not in models.languages:
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}: not in models.languages"
                )

    def treebank_folder(self, language: str) -> Path | None:
        """The UD treebank folder of a language, or ``None``: silver German labels (``de``)."""
        models = self.config
        if not set(tasks_reading("treebank")) & set(models.tasks):
            return None
        if language in models.treebanks:
            root = Path(models.ud_root)
            path = root if root.is_absolute() else self.study.base / root
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

    def sentence_tsv(self, language: str) -> dict[str, Path]:
        """The TSV files (split → path) of a language's sentence task; empty: none given."""
        models = self.config
        dataset = models.sentence_tsv.get(language)
        if dataset is None or not set(tasks_reading("sentence_tsv")) & set(models.tasks):
            return {}
        files = {split: self.study.base / name for split, name in vars(dataset).items() if name}
        for split, path in files.items():
            if not path.is_file():
                raise TokstudyError(
                    f"config key models.sentence_tsv.{language}.{split}: no file {path}"
                )
            check_header(path)
        return files

    @property
    def config(self) -> ModelsConfig:
        """The models section (defaults when the study has none; then no job uses it)."""
        return self.models or ModelsConfig()

    def cells(self) -> list[Cell]:
        """Every (language, tokenizer, size) that gets models, in a stable order.

        With ``characterbert`` set, each language also gets a cell of tokenizer
        ``characterbert`` whose size is its word vocabulary size.
        """
        if self.models is None:
            return []
        sizes = sorted(self.models.vocab_sizes)
        characterbert = self.models.characterbert
        return [
            make_cell(language, tokenizer, size)
            for language in sorted(self.models.languages)
            for tokenizer in sorted(self.models.tokenizers)
            for size in (sizes if self.tokenizers.vocab_sizes(tokenizer) != [None] else [None])
        ] + [
            make_cell(language, CHARACTERBERT, characterbert.word_vocab_size)
            for language in (sorted(self.models.languages) if characterbert else [])
        ]

    def has_task(self, task: str) -> bool:
        """Whether the models section asks for a task (a name of the task registry)."""
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
        path = self.treebank_folder(language)
        return str(path) if path else self.study.out(self.SILVER_TREEBANK, language=language)

    def finetune_data(self, wildcards: Any) -> dict[str, str]:
        """Data of a fine-tuning job: ``treebank``, or ``tsv_<split>`` files (sentence TSV)."""
        if "sentence_tsv" in TASKS[wildcards.task].inputs:
            files = self.sentence_tsv(wildcards.language)
            if files:
                return {f"tsv_{split}": str(path) for split, path in files.items()}
        return {"treebank": self.treebank(wildcards.language)}

    @staticmethod
    def finetune_task_pattern() -> str:
        """The ``{task}`` wildcard's pattern of the fine-tuning rule: every finetune task."""
        return "|".join(FINETUNE_TASKS)

    def tokenizer_dir(self, wildcards: Any) -> str | list[str]:
        """The tokenizer folder of a run; none for CharacterBERT, which spells words."""
        if wildcards.tokenizer == CHARACTERBERT:
            return []
        return self.tokenizers.tokenizer_dir(
            self.tokenizers.cell(wildcards.language, wildcards.tokenizer, wildcards.size)
        )

    def corpus_dir(self, wildcards: Any) -> str:
        """The prepared training corpus of a run (pretokenized, or CharacterBERT's)."""
        characterbert = wildcards.tokenizer == CHARACTERBERT
        pattern = self.CHARACTERBERT_CORPUS if characterbert else self.PRETOKENIZED
        keys = ("language", "tokenizer", "size")
        return self.study.out(pattern, **{key: getattr(wildcards, key) for key in keys})

    def characterbert(self) -> dict[str, Any]:
        """CharacterBERT settings as a dict (empty without ``characterbert``)."""
        characterbert = self.config.characterbert
        return to_dict(characterbert) if characterbert else {}

    def run_files(self, pattern: str, task: str | None = None) -> dict[str, dict[str, Any]]:
        """``pattern`` (a file of a run, or of its ``task``) of every run (job × seed) with
        its key columns for the summary."""
        if self.models is None:
            return {}
        pattern = fill(pattern, task=task) if task else pattern
        return {
            self.study.out(pattern, **job.wildcards(), seed=seed): {
                "language": job.language,
                "tokenizer": job.tokenizer,
                "vocab_size": job.size,
                "seed": seed,
                **({"task": task} if task else {}),
            }
            for job in self.cells()
            for seed in self.models.seeds
        }

    def mlm_files(self) -> dict[str, dict[str, Any]]:
        """The MLM metrics file of every run (none without the mlm task)."""
        return self.run_files(self.MLM) if self.has_task("mlm") else {}

    def clm_scales(self) -> dict[str, ClmScale]:
        """Every scale of the clm task by name (:attr:`ClmScale.key`): ``models.clm`` on
        every language and seed, then each of ``models.clm_scales`` (none without the clm
        task)."""
        if not self.has_task("clm"):
            return {}
        models = self.config
        scales = (ClmScale(models.languages, models.seeds, models.clm), *models.clm_scales)
        return {
            scale.key: replace(
                scale,
                languages=scale.languages or models.languages,
                seeds=scale.seeds or models.seeds,
            )
            for scale in scales
        }

    def clm_scale_pattern(self) -> str:
        """The ``{scale}`` wildcard's pattern: the names of the scales."""
        return "|".join(self.clm_scales()) or "none"

    def clm_priority(self, wildcards: Any) -> int:
        """The Snakemake priority of a causal-LM training job, longest first: a larger
        preset before a smaller one, and within a preset a tokenizer without a size
        (``char``: several times the tokens of a subword vocabulary) before the sized ones,
        so that no long model starts last and runs alone at the end."""
        return self._clm_rank(self.clm_scales()[wildcards.scale].clm.preset, wildcards.size)

    @staticmethod
    def _clm_rank(preset: str, size: str) -> int:
        return 2 * list(CLM_PRESETS).index(preset) + int(size == FULL_SIZE_LABEL)

    def cell_model_priority(self, cell: Cell) -> int:
        """The highest priority of the cell's causal-LM training jobs (0 without any).

        Snakemake gives no job the priority of a job that waits for it, so the jobs a
        model needs first (its pretokenized corpus, its tokenizer, its corpus) take this
        one: the long models of one language then do not wait behind short ones of others.
        """
        if cell not in self.cells():
            return 0
        ranks = [
            self._clm_rank(scale.clm.preset, cell.size)
            for scale in self.clm_scales().values()
            if cell.language in scale.languages
        ]
        return max(ranks, default=0)

    def pretokenize_priority(self, wildcards: Any) -> int:
        """The priority of a cell's ``pretokenize_mlm`` job: :meth:`cell_model_priority`."""
        return self.cell_model_priority(
            find_cell(self.cells(), wildcards.language, wildcards.tokenizer, wildcards.size)
        )

    def clm_settings(self, scale: str, seed: str) -> dict[str, Any]:
        """The ``clm`` settings of a scale as a dict, with the run's seed."""
        return to_dict(replace(self.clm_scales()[scale].clm, seed=int(seed)))

    def clm_files(self) -> dict[str, dict[str, Any]]:
        """The causal-LM scores of every run and scale with their keys (``scale``: its
        name); none without the clm task. CharacterBERT has no subword vocabulary."""
        files = {}
        for name, scale in self.clm_scales().items():
            pattern = fill(self.CLM, scale=name)
            for job in self.cells():
                if job.tokenizer == CHARACTERBERT or job.language not in scale.languages:
                    continue
                for seed in scale.seeds:
                    keys = {"language": job.language, "tokenizer": job.tokenizer}
                    keys |= {"vocab_size": job.size, "seed": seed, "scale": name}
                    files[self.study.out(pattern, **job.wildcards(), seed=seed)] = keys
        return files

    def finetune_files(self, pattern: str) -> dict[str, dict[str, Any]]:
        """``pattern`` (``FINETUNE_METRICS``, ``FINETUNE_PREDICTIONS``) of every fine-tuning
        run with its keys."""
        return {
            path: keys
            for task in FINETUNE_TASKS
            if self.has_task(task)
            for path, keys in self.run_files(pattern, task).items()
        }

    def summary_tables(self) -> list[str]:
        """Names of the statistics tables the summary writes."""
        tables = ["seed_summary", "wilcoxon", "flagged_runs"]
        tables += ["bootstrap"] if any(map(self.has_task, FINETUNE_TASKS)) else []
        tables += ["clm"] if self.has_task("clm") else []
        return tables + (["clm_scales"] if len(self.clm_scales()) > 1 else [])

    def targets(self) -> list[str]:
        """What ``summarize_models`` writes: results, statistics tables and the noise plot
        (nothing without the section)."""
        if self.models is None:
            return []
        patterns = [
            self.RESULTS_TABLE,
            *expand(self.SUMMARY_TABLE, table=self.summary_tables(), ext=["tsv", "md"]),
            *expand(self.NOISE_PLOT, ext=["png", "pdf"]),
        ]
        return [self.study.out(pattern) for pattern in patterns]
