"""Typed settings read from a study config, and the device keys of every training section.

Every settings dataclass is built with :func:`from_mapping`, which rejects unknown keys and
wrong types with a one-line :class:`~tokstudy.errors.TokstudyError` naming the key.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from tokstudy.errors import TokstudyError

#: a number YAML 1.1 reads as text, e.g. ``4.51e12`` (it wants ``4.51e+12``)
_FLOAT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")

DEVICES = ("auto", "cpu", "cuda")
MISSING_GPU_POLICIES = ("fallback", "error")
BAD_CHECKPOINT_POLICIES = ("error", "restart")
#: run settings that do not change the trained weights (left out of a checkpoint's
#: fingerprint: :meth:`RunSettings.weight_settings`)
NON_TRAINING_KEYS = frozenset(
    {"device", "on_missing_gpu", "devices", "checkpoint_every", "log_every", "on_bad_checkpoint"}
)


def choice(key: str, value: str, valid: tuple[str, ...]) -> None:
    """A one-line error naming the dotted config ``key`` unless ``value`` is in ``valid``."""
    if value not in valid:
        raise TokstudyError(f"{key} must be one of {', '.join(valid)}, got {value!r}")


def setting(
    default: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """A settings field: its default and what its value may be (checked by
    :class:`Settings`): at least ``low`` (above it when ``low_open``), at most ``high``
    (below it when ``high_open``), or one of ``choices``."""
    bounds = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    return dataclasses.field(default=default, metadata={"bounds": bounds, "choices": choices})


def proportion(default: float) -> Any:
    """A settings field whose value lies strictly between 0 and 1 (a probability, a level)."""
    return setting(default, low=0, high=1, low_open=True, high_open=True)


def check_setting(key: str, value: Any, bounds: Mapping[str, Any]) -> None:
    """A one-line error naming ``key`` unless ``value`` lies within ``bounds``."""
    low, high = bounds["low"], bounds["high"]
    too_low = low is not None and (value <= low if bounds["low_open"] else value < low)
    too_high = high is not None and (value >= high if bounds["high_open"] else value > high)
    if not (too_low or too_high):
        return
    if high is None:
        raise TokstudyError(f"{key} must be >= {low}, got {value}")
    left, right = "(" if bounds["low_open"] else "[", ")" if bounds["high_open"] else "]"
    raise TokstudyError(f"{key} must be in {left}{low}, {high}{right}, got {value}")


@dataclass(frozen=True)
class Settings:
    """Base of the settings dataclasses: checks every field declared with :func:`setting`.

    ``section`` is the dotted config key of the subclass, for error messages.
    """

    section: ClassVar[str]

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            key, value = f"{self.section}.{item.name}", getattr(self, item.name)
            if item.metadata.get("choices"):
                choice(key, value, item.metadata["choices"])
            elif "bounds" in item.metadata and value is not None:  # None: left out
                check_setting(key, value, item.metadata["bounds"])


@dataclass(frozen=True, kw_only=True)
class DeviceSettings(Settings):
    """Where a job runs, shared by every training and evaluation section.

    ``device``: ``auto`` uses CUDA when present, ``cuda`` requests it; when CUDA is
    requested but absent, ``on_missing_gpu`` says ``fallback`` (CPU, with a warning) or
    ``error``. ``bf16``: bf16 autocast on CUDA.
    """

    device: str = setting("auto", choices=DEVICES)
    on_missing_gpu: str = setting("fallback", choices=MISSING_GPU_POLICIES)
    bf16: bool = True


def learning_rate(default: float) -> Any:
    """The ``lr`` field of a training section: its default, and above 0."""
    return setting(default, low=0, low_open=True)


@dataclass(frozen=True, kw_only=True)
class RunSettings(DeviceSettings):
    """What every model training run shares (clm, MLM and NMT): its seed, the optimizer's
    ``lr``, ``weight_decay`` (not on biases and normalisation weights) and ``grad_clip``,
    how often it checkpoints and logs, and what an unreadable checkpoint does
    (``on_bad_checkpoint``: ``error`` stops, ``restart`` logs a warning, ignores it and
    trains from step 0). ``compile``: the training loss (forward and backward) runs
    through ``torch.compile``; left out, the task's choice on CUDA (clm compiles, MLM and
    NMT do not: docs/gpu.md) and eager on the CPU. Device keys: :class:`DeviceSettings`.
    ``devices``: processes (GPUs, or CPU processes) that train one model together, DDP
    over shares of the global batch (:mod:`tokstudy.training.distributed`).
    ``accumulate``: micro-batches per step (the same global batch in less memory).

    A subclass names its own settings that do not change the trained weights in
    ``non_training`` (added to these); :meth:`weight_settings` is what a checkpoint's
    fingerprint hashes."""

    #: the subclass's own settings that do not change the trained weights
    non_training: ClassVar[frozenset[str]] = frozenset()

    seed: int = 0
    lr: float = learning_rate(5e-4)
    weight_decay: float = setting(0.01, low=0)
    grad_clip: float = setting(1.0, low=0, low_open=True)
    devices: int = setting(1, low=1)
    accumulate: int = setting(1, low=1)
    checkpoint_every: int = setting(200, low=1)
    log_every: int = setting(20, low=1)
    on_bad_checkpoint: str = setting("error", choices=BAD_CHECKPOINT_POLICIES)
    compile: bool | None = None

    def weight_settings(self) -> dict[str, Any]:
        """The settings that fix the trained weights (the checkpoint fingerprint's)."""
        left_out = NON_TRAINING_KEYS | self.non_training
        return {k: v for k, v in to_dict(self).items() if k not in left_out}


T = TypeVar("T")


def from_mapping(
    cls: type[T], data: Mapping[str, Any] | None, where: str = "models", *, check: bool = True
) -> T:
    """Build dataclass ``cls`` from a config mapping, checking keys and value types.

    ``check=False`` rebuilds settings the study built and checked when it planned the job
    (:func:`to_dict` of them, a rule's plain data): keys and types are restored as above,
    but the dataclasses' own checks (bounds, choices, ``__post_init__``) are not run again,
    as :mod:`pickle` rebuilds an object without calling its ``__init__`` (one check per
    value: :mod:`tokstudy.workflow.binder`).
    """
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
    values = {
        key: _coerce(hints[key], value, f"{where}.{key}", check) for key, value in data.items()
    }
    return cls(**values) if check else _rebuilt(cls, values)


def _rebuilt(cls: type[T], values: Mapping[str, Any]) -> T:
    """An instance of dataclass ``cls`` with ``values`` (defaults for the rest), its
    ``__init__`` and so its checks not run."""
    instance = object.__new__(cls)
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        if item.name in values:
            value = values[item.name]
        elif item.default_factory is not dataclasses.MISSING:
            value = item.default_factory()
        else:
            value = item.default
        object.__setattr__(instance, item.name, value)
    return instance


def _coerce(hint: Any, value: Any, where: str, check: bool = True) -> Any:
    """``value`` converted to type ``hint`` (dataclass, optional, tuple, dict or scalar);
    ``check``: see :func:`from_mapping`."""
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        return from_mapping(hint, value, where, check=check)
    origin = typing.get_origin(hint)
    if origin is types.UnionType:
        if value is None:
            return None
        (item,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _coerce(item, value, where, check)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise TokstudyError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(hint)
        item = args[0]
        return tuple(_coerce(item, v, f"{where}[{i}]", check) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise TokstudyError(f"{where}: expected a mapping, got {value!r}")
        item = typing.get_args(hint)[1]
        return {
            str(k): str(v) if item is str else _coerce(item, v, f"{where}.{k}", check)
            for k, v in value.items()
        }
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is Path and isinstance(value, str | Path):
        return Path(value)
    if hint is bool and not isinstance(value, bool):
        raise TokstudyError(f"{where}: expected true/false, got {value!r}")
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TokstudyError(f"{where}: expected an integer, got {value!r}")
    if hint is float and isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
        raise TokstudyError(
            f"{where}: expected float, got the text {value!r} (YAML reads an exponent "
            "without a dot and sign as text: write e.g. 4.5e+12)"
        )
    if not isinstance(value, hint):
        raise TokstudyError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


def to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a config dataclass (tuples become lists)."""
    return dataclasses.asdict(config)


def seeded_dict(config: Any, seed: int | str) -> dict[str, Any]:
    """:func:`to_dict` of a checked training config with one run's ``seed`` in its place
    (what a rule passes; nothing is checked again)."""
    return {**to_dict(config), "seed": int(seed)}
