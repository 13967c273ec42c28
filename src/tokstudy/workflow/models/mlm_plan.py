"""The planner of BERT MLM pretraining and its evaluation (tasks ``mlm``, ``noise``),
CharacterBERT's corpora included."""

from __future__ import annotations

from typing import Any

from tokstudy.models.config import to_dict
from tokstudy.workflow.models.section import CHARACTERBERT, ModelsSection


class MlmPlanner:
    """The pretrained MLM of every run: its training inputs, settings and scores."""

    PRETRAIN = f"{ModelsSection.RUN}/pretrain"
    MLM = f"{ModelsSection.RUN}/mlm.tsv"
    MLM_NOISE_EDITS = f"{ModelsSection.RUN}/mlm_noise_edits.tsv"
    #: a CharacterBERT corpus (its vocabularies and words): its language and word
    #: vocabulary size
    CHARACTERBERT_CELL = "{language}/{size}"
    CHARACTERBERT_CORPUS = f"models/characterbert/{CHARACTERBERT_CELL}"

    def __init__(self, section: ModelsSection) -> None:
        self.section = section

    def tokenizer_dir(self, wildcards: Any) -> str | list[str]:
        """The tokenizer folder of a run; none for CharacterBERT, which spells words."""
        if wildcards.tokenizer == CHARACTERBERT:
            return []
        tokenizers = self.section.tokenizers
        return tokenizers.tokenizer_dir(
            tokenizers.cell(wildcards.language, wildcards.tokenizer, wildcards.size)
        )

    def corpus_dir(self, wildcards: Any) -> str:
        """The prepared training corpus of a run (pretokenized, or CharacterBERT's)."""
        characterbert = wildcards.tokenizer == CHARACTERBERT
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

    def mlm_files(self) -> dict[str, dict[str, Any]]:
        """The MLM metrics file of every run (none without the mlm task)."""
        return self.section.run_files(self.MLM) if self.section.has_task("mlm") else {}
