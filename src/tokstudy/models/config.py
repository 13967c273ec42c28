"""Typed settings of the model stage, read from the ``models:`` section of the config.

Every dataclass here is built with :func:`from_mapping`, which rejects unknown keys and
wrong types with a one-line :class:`~tokstudy.errors.TokstudyError` naming the key.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import SPECIAL_TOKENS

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

DEVICES = ("auto", "cpu", "cuda")
MISSING_GPU_POLICIES = ("fallback", "error")
BAD_CHECKPOINT_POLICIES = ("error", "restart")
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


def choice(key: str, value: str, valid: tuple[str, ...]) -> None:
    """A one-line error naming the dotted config ``key`` unless ``value`` is in ``valid``."""
    if value not in valid:
        raise TokstudyError(f"{key} must be one of {', '.join(valid)}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class DeviceSettings:
    """Where a job runs, shared by every training and evaluation section.

    ``device``: ``auto`` uses CUDA when present, ``cuda`` requests it; when CUDA is
    requested but absent, ``on_missing_gpu`` says ``fallback`` (CPU, with a warning) or
    ``error``. ``bf16``: bf16 autocast on CUDA. ``section`` is the config key of the
    subclass, for error messages.
    """

    section: ClassVar[str]
    device: str = "auto"
    on_missing_gpu: str = "fallback"
    bf16: bool = True

    def __post_init__(self) -> None:
        choice(f"{self.section}.device", self.device, DEVICES)
        choice(f"{self.section}.on_missing_gpu", self.on_missing_gpu, MISSING_GPU_POLICIES)


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


T = TypeVar("T")


def from_mapping(cls: type[T], data: Mapping[str, Any] | None, where: str = "models") -> T:
    """Build dataclass ``cls`` from a config mapping, checking keys and value types."""
    if data is None:
        return cls()
    if not isinstance(data, Mapping):
        raise TokstudyError(f"{where}: expected a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise TokstudyError(
            f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(fields))}"
        )
    missing = [
        name
        for name, f in fields.items()
        if name not in data
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise TokstudyError(f"{where}: missing key(s) {', '.join(missing)}")
    hints = typing.get_type_hints(cls)
    values = {key: _coerce(hints[key], value, f"{where}.{key}") for key, value in data.items()}
    return cls(**values)


def _coerce(hint: Any, value: Any, where: str) -> Any:
    """``value`` converted to type ``hint`` (dataclass, optional, tuple, dict or scalar)."""
    if dataclasses.is_dataclass(hint):
        return from_mapping(hint, value, where)
    origin = typing.get_origin(hint)
    if origin is types.UnionType:
        if value is None:
            return None
        (item,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _coerce(item, value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise TokstudyError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(hint)
        item = args[0]
        return tuple(_coerce(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise TokstudyError(f"{where}: expected a mapping, got {value!r}")
        item = typing.get_args(hint)[1]
        return {
            str(k): str(v) if item is str else _coerce(item, v, f"{where}.{k}")
            for k, v in value.items()
        }
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is bool and not isinstance(value, bool):
        raise TokstudyError(f"{where}: expected true/false, got {value!r}")
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TokstudyError(f"{where}: expected an integer, got {value!r}")
    if not isinstance(value, hint):
        raise TokstudyError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


def to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a config dataclass (tuples become lists)."""
    return dataclasses.asdict(config)
