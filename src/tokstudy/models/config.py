"""Typed settings of the model stage, read from the ``models:`` section of the config.

Every dataclass here is built with :func:`tokstudy.training.config.from_mapping`, which
rejects unknown keys and wrong types with a one-line :class:`~tokstudy.errors.TokstudyError`
naming the key (re-exported here with ``to_dict`` for the workflow's model rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import SPECIAL_TOKENS
from tokstudy.training.config import (
    BAD_CHECKPOINT_POLICIES,
    DeviceSettings,
    choice,
)
from tokstudy.training.config import from_mapping as from_mapping
from tokstudy.training.config import to_dict as to_dict

#: BERT sizes: layers, hidden size, attention heads, feed-forward size
PRESETS: dict[str, dict[str, int]] = {
    "tiny": {
        "num_hidden_layers": 2,
        "hidden_size": 128,
        "num_attention_heads": 2,
        "intermediate_size": 512,
    },
    "small": {
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
    },
    "base": {
        "num_hidden_layers": 12,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
    },
}

TASKS = ("mlm", "noise", "pos", "sentence")


@dataclass(frozen=True)
class CharBertConfig:
    """CharacterBERT's word vocabulary and character CNN (config key ``models.characterbert``).

    ``word_vocab_size`` counts the MLM's output words, the five special tokens included
    (the top ``word_vocab_size - 5`` training words; fewer when the text has fewer).
    """

    word_vocab_size: int = 20000
    max_word_chars: int = 20
    max_chars: int = 1000
    char_embedding_dim: int = 16
    #: (kernel width, number of filters) of the character CNN
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256))
    highway_layers: int = 2

    def __post_init__(self) -> None:
        minimum = {
            "word_vocab_size": len(SPECIAL_TOKENS) + 1,
            "max_word_chars": 3,
            "max_chars": 1,
            "char_embedding_dim": 1,
            "highway_layers": 0,
        }
        for key, low in minimum.items():
            if getattr(self, key) < low:
                raise TokstudyError(
                    f"models.characterbert.{key} must be >= {low}, got {getattr(self, key)}"
                )
        if not self.filters or any(len(f) != 2 or min(f) < 1 for f in self.filters):
            raise TokstudyError(
                "models.characterbert.filters must be a non-empty list of "
                f"[width, count] pairs >= 1, got {self.filters}"
            )
        widest = max(width for width, _ in self.filters)
        if self.max_word_chars < widest:
            raise TokstudyError(
                f"models.characterbert.max_word_chars ({self.max_word_chars}) must be >= the "
                f"widest filter ({widest})"
            )


@dataclass(frozen=True)
class TsvDataset:
    """A user-supplied sentence-classification dataset: tab-separated ``text``/``label`` files.

    Paths are relative to the working directory unless absolute; without ``validation``,
    a seeded ``models.finetune.validation_fraction`` of ``train`` is held out.
    """

    train: str
    test: str
    validation: str = ""


@dataclass(frozen=True)
class PretrainConfig(DeviceSettings):
    """One pretraining run (one seed).

    Device keys: :class:`DeviceSettings`. ``on_bad_checkpoint``: ``error`` stops on an
    unreadable checkpoint, ``restart`` logs a warning, ignores it and trains from step 0.
    """

    section: ClassVar[str] = "models.pretrain"

    preset: str = "tiny"
    steps: int = 1000
    batch_size: int = 32
    max_length: int = 128
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup_steps: int = 100
    grad_clip: float = 1.0
    dropout: float = 0.1
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    whole_word_mask: bool = False
    seed: int = 0
    checkpoint_every: int = 200
    log_every: int = 20
    on_bad_checkpoint: str = "error"

    def __post_init__(self) -> None:
        super().__post_init__()
        choice("models.pretrain.preset", self.preset, tuple(PRESETS))
        choice("models.pretrain.on_bad_checkpoint", self.on_bad_checkpoint, BAD_CHECKPOINT_POLICIES)
        for key in ("steps", "batch_size", "checkpoint_every", "log_every"):
            if getattr(self, key) < 1:
                raise TokstudyError(f"models.pretrain.{key} must be >= 1, got {getattr(self, key)}")
        if self.max_length < 4:
            raise TokstudyError(f"models.pretrain.max_length must be >= 4, got {self.max_length}")
        if not 0 < self.mlm_probability < 1:
            raise TokstudyError(
                f"models.pretrain.mlm_probability must be in (0, 1), got {self.mlm_probability}"
            )
        if self.mask_replace_prob + self.random_replace_prob > 1:
            raise TokstudyError(
                "models.pretrain.mask_replace_prob + random_replace_prob must not exceed 1"
            )


@dataclass(frozen=True)
class FinetuneConfig(DeviceSettings):
    """Fine-tuning of a pretrained MLM on a downstream task (one seed per call)."""

    section: ClassVar[str] = "models.finetune"

    epochs: int = 3
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 128
    seed: int = 0
    validation_fraction: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.validation_fraction < 1:
            raise TokstudyError(
                "models.finetune.validation_fraction must be in (0, 1), "
                f"got {self.validation_fraction}"
            )


@dataclass(frozen=True)
class EvalConfig(DeviceSettings):
    """Masked-LM evaluation on held-out text, clean and noised."""

    section: ClassVar[str] = "models.evaluation"

    max_lines: int = 1000
    batch_size: int = 64
    noise_levels: tuple[int, ...] = (10, 20, 30)
    noise_word_fraction: float = 0.2
    noise_seed: int = 0
    bootstrap_resamples: int = 1000
    bootstrap_seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        for level in self.noise_levels:
            if not 0 < level <= 100:
                raise TokstudyError(f"models.evaluation.noise_levels: {level} is not a percentage")
        if not 0 < self.noise_word_fraction <= 1:
            raise TokstudyError(
                "models.evaluation.noise_word_fraction must be in (0, 1], "
                f"got {self.noise_word_fraction}"
            )


@dataclass(frozen=True)
class ModelsConfig:
    """The whole ``models:`` section: what to pretrain and how to evaluate it.

    ``languages`` / ``tokenizers`` / ``vocab_sizes`` select which trained tokenizers get a
    model (empty: none); ``seeds`` are run one pretraining each; ``tasks`` is a subset of
    ``("mlm", "noise", "pos", "sentence")``; ``treebanks`` maps a language to a UD folder
    name under ``ud_root`` (relative to the working directory unless absolute);
    ``sentence_feature`` is the UD feature whose presence on a
    word with a UPOS in ``sentence_upos`` labels a sentence ``yes``; ``sentence_tsv`` maps
    a language to a :class:`TsvDataset` its sentence task uses instead of the treebank.
    ``characterbert`` (when set) adds a CharacterBERT per language, pretrained with the
    ``pretrain`` settings and evaluated like the BERTs.
    """

    languages: tuple[str, ...] = ()
    tokenizers: tuple[str, ...] = ()
    vocab_sizes: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    tasks: tuple[str, ...] = ("mlm", "noise", "pos", "sentence")
    treebanks: dict[str, str] = field(default_factory=dict)
    ud_root: str = ""
    sentence_feature: str = "Tense=Past"
    sentence_upos: tuple[str, ...] = ("VERB", "AUX")
    sentence_tsv: dict[str, TsvDataset] = field(default_factory=dict)
    characterbert: CharBertConfig | None = None
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)
    evaluation: EvalConfig = field(default_factory=EvalConfig)

    def __post_init__(self) -> None:
        for task in self.tasks:
            choice("models.tasks", task, TASKS)
        if "=" not in self.sentence_feature:
            raise TokstudyError(
                f"models.sentence_feature must look like Name=Value, got {self.sentence_feature!r}"
            )
