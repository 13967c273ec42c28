"""Cross-key checks shared by the section planners: one-line errors naming the key."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.params import param_key
from tokstudy.tokenizers.registry import adapter_class


def tokenizer_algorithm(config: Mapping[str, Any], name: str) -> str:
    """The registered adapter a study's tokenizer ``name`` trains with: the ``algorithm``
    of its ``tokenizers:`` entry (a named variant), else the name itself."""
    entry = (config.get("tokenizers") or {}).get(name) or {}
    return entry.get("algorithm") or name


def registered_adapter(key: str, name: str, config: Mapping[str, Any]) -> type[Tokenizer]:
    """The adapter class of a tokenizer name given under config ``key`` (a named variant of
    the study's ``config``: its algorithm's)."""
    try:
        return adapter_class(tokenizer_algorithm(config, name))
    except TokstudyError as exc:
        raise TokstudyError(f"{key}: {exc}") from None


def check_listed(names: Iterable[str], known: Iterable[str], message: str) -> None:
    """An error unless every name is in ``known``; ``message`` is formatted with ``name``
    and ``known`` (the known names joined by ``, ``)."""
    known = sorted(known)
    for name in names:
        if name not in known:
            raise TokstudyError(message.format(name=name, known=", ".join(known)))


def check_tokenizer_params(
    name: str, adapter: type[Tokenizer], params: Mapping[str, Any], languages: Sequence[str]
) -> dict[str, Any]:
    """A tokenizer's training ``params`` as its ``adapter`` declares them (types, ranges,
    choices, its library's own check of an open adapter's further keys) and against the
    ``languages`` it is trained on: one line naming ``tokenizers.<name>.params.<key>``
    before the first job, not in the training job. The checked params (defaults filled)."""
    try:
        checked = adapter.check_params(params, name)
    except TokstudyError as exc:
        raise TokstudyError(f"config key {exc}") from None
    if (found := adapter.check_study_params(checked, languages)) is not None:
        key, problem = found
        raise TokstudyError(f"config key {param_key(name, key)}: {problem}")
    return checked


def check_balance(adapter: type[Tokenizer], params: Mapping[str, Any]) -> None:
    """A parity-aware tokenizer's training ``params`` give one of its ``balance_keys`` (a
    parallel dev set or ratios); else one line naming the key."""
    if not adapter.parity_aware:
        return
    if not any(params.get(key) is not None for key in adapter.balance_keys):
        raise TokstudyError(
            f"config key tokenizers.{adapter.name}.params: a parity-aware tokenizer needs a "
            f"parallel dev set or ratios: give one of {', '.join(adapter.balance_keys)}"
        )
