"""The one binder between a rule and the library function it names.

A rule names its function with ``params: **step("tokstudy.<package>.<module>:<function>")``
(``workflow/rules/common.smk``); :func:`bound_arguments` gives each parameter of the
function the rule's input, output, parameter or wildcard of the same name, turned into the
parameter's annotated type:

- ``Path`` from a path string, ``int`` from a wildcard's digits; ``Path | None`` is ``None``
  for an empty one (an optional
  input); ``Sequence[Path]``, ``Mapping[str, Path]`` and nestings of these element by
  element (one string where a sequence is annotated is a sequence of one);
- a settings dataclass from the rule's plain mapping, rebuilt without running its checks
  again: the study checked those values once, when it planned the job
  (:func:`tokstudy.training.config.from_mapping` with ``check=False``);
- ``threads``: the job's cores; ``code``: the step and the fingerprint of its code, as
  ``meta.json`` and ``stats.json`` record them
  (:func:`tokstudy.workflow.snakemake_job.code_record`); ``checkpoint_root``: a training
  job's checkpoint root, ``params.checkpoints``, without what a job of other code left
  there (:func:`tokstudy.workflow.training_state.checkpoint_root`);
  ``outputs``: every output file, by name where the parameter is a mapping, else in order
  (a plot's PNG and PDF).

What the function does not take is left to Snakemake (files that only order the jobs). A
name found in two places, or a required parameter found in none, is one line naming the
function and the name.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError
from tokstudy.training.config import from_mapping
from tokstudy.workflow.snakemake_job import Snakemake, code_record
from tokstudy.workflow.training_state import checkpoint_root

#: the job's containers a parameter is looked up in, by name
NAMED_SOURCES = ("input", "output", "params", "wildcards")
#: parameters that come from the job itself, not from a named entry
JOB_VALUES: dict[str, Callable[[Snakemake], Any]] = {
    "threads": lambda job: job.threads,
    "code": code_record,
    "checkpoint_root": lambda job: checkpoint_root(job.params.checkpoints, job.params.code),
}
_SEQUENCES = (list, tuple, Sequence)
_MAPPINGS = (dict, Mapping)


def imported_function(target: str) -> Callable[..., Any]:
    """The function ``module:function`` names (imported now)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def named_entries(container: Any) -> dict[str, Any]:
    """The named entries of one of a job's containers (a Snakemake ``Namedlist`` or a
    stand-in namespace)."""
    items = getattr(container, "items", None)
    return dict(items()) if callable(items) else dict(vars(container))


def bound_arguments(function: Callable[..., Any], job: Snakemake) -> dict[str, Any]:
    """The keyword arguments ``function`` gets from ``job`` (see the module docstring)."""
    where = f"{function.__module__}:{function.__name__}"
    hints = typing.get_type_hints(function)
    found: dict[str, list[tuple[str, Any]]] = {}
    for source in NAMED_SOURCES:
        for name, value in named_entries(getattr(job, source)).items():
            found.setdefault(name, []).append((source, value))
    arguments = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if name in JOB_VALUES:
            arguments[name] = JOB_VALUES[name](job)
            continue
        if name == "outputs":
            by_name = typing.get_origin(hints.get(name)) in _MAPPINGS
            outputs = named_entries(job.output) if by_name else list(job.output)
            arguments[name] = converted(hints.get(name, Any), outputs, f"{where}: {name}")
            continue
        places = found.get(name, [])
        if len(places) > 1:
            sources = " and ".join(source for source, _ in places)
            raise TokstudyError(f"{where}: {name!r} is both a rule's {sources}; rename one")
        if not places:
            if parameter.default is inspect.Parameter.empty:
                raise TokstudyError(
                    f"{where}: parameter {name!r} is no input, output, param or wildcard of "
                    "the rule"
                )
            continue
        arguments[name] = converted(hints.get(name, Any), places[0][1], f"{where}: {name}")
    return arguments


def converted(hint: Any, value: Any, where: str) -> Any:
    """``value`` (a job's plain entry) as type ``hint`` (see the module docstring)."""
    if value is None or hint is Any:
        return value
    if hint is Path:
        return Path(value)
    if hint is int and isinstance(value, str):
        if not value.isdigit():
            raise TokstudyError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return from_mapping(hint, value, where, check=False)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kinds = [arg for arg in args if arg is not type(None)]
        if len(kinds) < len(args) and not value:
            return None
        return converted(kinds[0], value, where) if len(kinds) == 1 else value
    if origin in _MAPPINGS and len(args) == 2 and isinstance(value, Mapping):
        return {
            converted(args[0], key, where): converted(args[1], item, where)
            for key, item in value.items()
        }
    if origin in _SEQUENCES and args:
        items = [value] if isinstance(value, str) else list(value)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return tuple(converted(arg, item, where) for arg, item in zip(args, items, strict=True))
        each = [converted(args[0], item, where) for item in items]
        return tuple(each) if origin is tuple else each
    return value
