"""The planner of BERT MLM pretraining and its evaluation (tasks ``mlm``, ``noise``),
CharacterBERT's corpora included."""

from __future__ import annotations

from typing import Any

from tokstudy.models.config import to_dict
from tokstudy.workflow.models.section import CHARACTERBERT_NAME, ModelsSection
from tokstudy.workflow.models.task_planner import TaskPlanner

#: what every run of a task on the pretrained MLM uses
PRETRAIN_RULES = ("pretokenize_mlm", "pretrain_mlm")


class MlmPlanner(TaskPlanner):
    """The pretrained MLM of every run: its training inputs, settings and scores."""

    PRETRAIN = f"{ModelsSection.RUN}/pretrain"
    MLM = f"{ModelsSection.RUN}/mlm.tsv"
    MLM_NOISE_EDITS = f"{ModelsSection.RUN}/mlm_noise_edits.tsv"
    #: a CharacterBERT corpus (its vocabularies and words): its language and word
    #: vocabulary size
    CHARACTERBERT_CELL = "{language}/{size}"
    CHARACTERBERT_CORPUS = f"models/characterbert/{CHARACTERBERT_CELL}"

    def rules(self) -> tuple[str, ...]:
        """Pretraining and the MLM's evaluation (none unless asked for)."""
        return (*PRETRAIN_RULES, "evaluate_mlm") if self.asked() else ()

    def gpu_sections(self) -> dict[str, tuple[list[Any], str]]:
        """MLM pretraining's settings (the fine-tuning tasks' pretraining too)."""
        return {"pretrain_mlm": ([self.section.config.pretrain], "models.pretrain.devices")}

    def tokenizer_dir(self, wildcards: Any) -> str | list[str]:
        """The tokenizer folder of a run; none for CharacterBERT, which spells words."""
        if wildcards.tokenizer == CHARACTERBERT_NAME:
            return []
        tokenizers = self.section.tokenizers
        return tokenizers.tokenizer_dir(
            tokenizers.cell(wildcards.language, wildcards.tokenizer, wildcards.size)
        )

    def corpus_dir(self, wildcards: Any) -> str:
        """The prepared training corpus of a run (pretokenized, or CharacterBERT's)."""
        characterbert = wildcards.tokenizer == CHARACTERBERT_NAME
        pattern = self.CHARACTERBERT_CORPUS if characterbert else ModelsSection.PRETOKENIZED
        keys = ("language", "tokenizer", "size")
        return self.section.study.out(pattern, **{key: getattr(wildcards, key) for key in keys})

    def characterbert(self) -> dict[str, Any]:
        """CharacterBERT settings as a dict (empty without ``characterbert``)."""
        characterbert = self.section.config.characterbert
        return to_dict(characterbert) if characterbert else {}

    def evaluation(self) -> dict[str, Any]:
        """Evaluation settings with the noise levels that apply."""
        section = self.section
        return {**to_dict(section.config.evaluation), "noise_levels": section.noise_levels()}

    def score_files(self) -> dict[str, dict[str, Any]]:
        """The MLM metrics file of every run with its keys, ``task`` among them (none
        without the mlm task)."""
        return {
            path: keys
            for task in self.asked()
            for path, keys in self.section.run_files(self.MLM, task).items()
        }
