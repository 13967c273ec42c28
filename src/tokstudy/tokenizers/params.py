"""Adapter parameters: declared once per adapter (``Tokenizer.params_spec``), checked once.

An adapter declares ``name → Param`` (accepted types, default, allowed values, bounds,
what the items of a mapping or list must be); :func:`check_params` fills in the defaults
and turns every unknown key or bad value into one :class:`~tokstudy.errors.TokstudyError`
line naming the config key ``tokenizers.<adapter>.params.<key>``. Adapters that hand
further keys to their library's trainer (SentencePiece, HF ``tokenizers``) declare
``open_ended``; their library checks those keys (``Tokenizer.check_params``). The workflow
checks every tokenizer's parameters before its first job
(:class:`tokstudy.workflow.tokenizers.plan.TokenizersPlanner`), the training job again.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tokstudy.errors import TokstudyError


class _Omitted:
    """Default of a parameter that is passed on only when the config gives it."""

    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()

_TYPE_NAMES = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}


@dataclass(frozen=True)
class Param:
    """One adapter parameter.

    ``types``: accepted Python types (``bool`` is never taken for ``int``/``float``; a
    ``float`` must be finite); ``default``: its value when not given (:data:`OMITTED`: left
    out of the result); ``choices``: the allowed values, if limited; ``minimum`` and
    ``maximum``: the bounds of a number, excluded with ``low_open`` / ``high_open``;
    ``items``: what each value of a mapping (or item of a list) must be.
    """

    types: type | tuple[type, ...]
    default: Any = OMITTED
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    low_open: bool = False
    high_open: bool = False
    items: Param | None = None

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` itself, or ``None`` if it is acceptable (its items
        are :meth:`item_problems`)."""
        types = self.types if isinstance(self.types, tuple) else (self.types,)
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
            return f"must be {expected}, got {value!r}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number, got {value!r}"
        if self.choices and value not in self.choices:
            return f"must be one of {', '.join(map(str, self.choices))}, got {value!r}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        low, high = self.minimum, self.maximum
        if low is not None and (value <= low if self.low_open else value < low):
            return f"must be {'>' if self.low_open else '≥'} {low}, got {value!r}"
        if high is not None and (value >= high if self.high_open else value > high):
            return f"must be {'<' if self.high_open else '≤'} {high}, got {value!r}"
        return None

    def item_problems(self, value: Any) -> list[tuple[str, str]]:
        """``(suffix of the key, problem)`` of each bad item of a mapping (``.key``) or
        list (``[i]``) value."""
        if self.items is None or not isinstance(value, dict | list):
            return []
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        found = []
        for key, item in pairs:
            if (problem := self.items.problem(item)) is not None:
                found.append((f".{key}" if isinstance(value, dict) else f"[{key}]", problem))
        return found


def param_key(adapter: str, key: str | None = None) -> str:
    """The config key of an adapter's parameters (or of one of them)."""
    return f"tokenizers.{adapter}.params" + (f".{key}" if key else "")


def check_params(
    adapter: str,
    params: Mapping[str, Any] | None,
    spec: Mapping[str, Param],
    *,
    open_ended: bool = False,
) -> dict[str, Any]:
    """``params`` over the declared defaults (in declaration order, then extra keys).

    Unknown keys (unless ``open_ended``) and values of the wrong type, outside the
    choices or below the minimum raise :class:`TokstudyError` naming the key.
    """
    params = dict(params or {})
    unknown = sorted(set(params) - set(spec))
    if unknown and not open_ended:
        raise TokstudyError(
            f"{param_key(adapter)}: unknown parameter {unknown[0]!r}; "
            f"valid parameters: {', '.join(spec) or 'none'}"
        )
    checked: dict[str, Any] = {}
    for key, declared in spec.items():
        if key not in params:
            if declared.default is not OMITTED:
                checked[key] = copy.deepcopy(declared.default)
            continue
        if (problem := declared.problem(params[key])) is not None:
            raise TokstudyError(f"{param_key(adapter, key)}: {problem}")
        for suffix, problem in declared.item_problems(params[key]):
            raise TokstudyError(f"{param_key(adapter, key)}{suffix}: {problem}")
        checked[key] = params[key]
    checked.update((key, params[key]) for key in params if key not in spec)
    return checked
