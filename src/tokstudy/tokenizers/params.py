"""Adapter parameters: declared once per adapter (``Tokenizer.params_spec``), checked once.

An adapter declares ``name → Param`` (accepted types, default, allowed values, lower
bound); :func:`check_params` fills in the defaults and turns every unknown key or bad
value into one :class:`~tokstudy.errors.TokstudyError` line naming the config key
``tokenizers.<adapter>.params.<key>``. Adapters that hand further keys to their library's
trainer (SentencePiece, HF ``tokenizers``) declare ``open_ended`` and receive those keys
unchecked.
"""

from __future__ import annotations

import copy
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

    ``types``: accepted Python types (``bool`` is never taken for ``int``/``float``);
    ``default``: its value when not given (:data:`OMITTED`: left out of the result);
    ``choices``: the allowed values, if limited; ``minimum``: the smallest allowed number.
    """

    types: type | tuple[type, ...]
    default: Any = OMITTED
    choices: tuple[Any, ...] = ()
    minimum: float | None = None

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value``, or ``None`` if it is acceptable."""
        types = self.types if isinstance(self.types, tuple) else (self.types,)
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
            return f"must be {expected}, got {value!r}"
        if self.choices and value not in self.choices:
            return f"must be one of {', '.join(map(str, self.choices))}, got {value!r}"
        if self.minimum is not None and value < self.minimum:
            return f"must be ≥ {self.minimum}, got {value!r}"
        return None


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
        checked[key] = params[key]
    checked.update((key, params[key]) for key in params if key not in spec)
    return checked
