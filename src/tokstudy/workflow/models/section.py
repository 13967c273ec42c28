"""The ``models:`` section that every kind of model task shares: its settings, its checks
against the trained tokenizers, its cells and runs, and the pretokenized corpora that
MLM pretraining and the causal LM both train on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError
from tokstudy.models.config import ModelsConfig, from_mapping
from tokstudy.tokenizers.cells import Cell, make_cell
from tokstudy.training.config import seeded_dict
from tokstudy.workflow.study.checks import check_listed
from tokstudy.workflow.study.paths import CELL, fill

if TYPE_CHECKING:
    from tokstudy.workflow.study.core import Study
    from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

#: the tokenizer column of CharacterBERT runs (its size is the word vocabulary size)
CHARACTERBERT_NAME = "characterbert"


class ModelsSection:
    """The ``models:`` section of a study, checked against the tokenizers it trains
    (``models`` is ``None`` without the section: then there are no runs)."""

    #: one model run: a cell and a seed
    RUN_CELL = f"{CELL}/seed{{seed}}"
    RUN = f"models/runs/{RUN_CELL}"
    #: the training corpus of a cell, pretokenized (BERT MLM and the causal LM read it)
    PRETOKENIZED = f"models/corpora/{CELL}"
    #: one shard of it (``models.pretokenize_shards`` > 1), removed once merged
    SHARD_CELL = f"{CELL}/shard{{shard}}"
    PRETOKENIZED_SHARD = f"models/corpora/{CELL}.shards/{{shard}}"

    def __init__(self, study: Study, tokenizers: TokenizersPlanner) -> None:
        self.study = study
        self.tokenizers = tokenizers
        self.models: ModelsConfig | None = None
        if "models" in study.config:
            self.models = from_mapping(ModelsConfig, study.config["models"])
            self._check(self.models)

    def _check(self, models: ModelsConfig) -> None:
        """The section's languages, tokenizers and sizes against what the study trains."""
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

    @property
    def config(self) -> ModelsConfig:
        """The models section (defaults when the study has none; then no job uses it)."""
        return self.models or ModelsConfig()

    @property
    def pretokenize_shards(self) -> int:
        """Jobs each cell's training text is pre-tokenized in (``models.pretokenize_shards``)."""
        return self.config.pretokenize_shards

    def pretokenized_shards(self, wildcards: Any) -> list[str]:
        """The shard folders of a cell's pretokenized corpus, in order."""
        cell = {key: wildcards[key] for key in ("language", "tokenizer", "size")}
        return [
            self.study.out(self.PRETOKENIZED_SHARD, shard=shard, **cell)
            for shard in range(self.pretokenize_shards)
        ]

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
            make_cell(language, CHARACTERBERT_NAME, characterbert.word_vocab_size)
            for language in (sorted(self.models.languages) if characterbert else [])
        ]

    def has_task(self, task: str) -> bool:
        """Whether the models section asks for a task (a name of the task registry)."""
        return self.models is not None and task in self.models.tasks

    def noise_levels(self) -> list[int]:
        """Noise levels of the evaluation (none unless the noise task is asked for)."""
        return list(self.config.evaluation.noise_levels) if self.has_task("noise") else []

    def seeded(self, section: str, seed: str) -> dict[str, Any]:
        """``pretrain`` or ``finetune`` settings as a dict, with the run's seed."""
        return seeded_dict(getattr(self.config, section), seed)

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
