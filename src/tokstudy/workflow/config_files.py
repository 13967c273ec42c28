"""Study config files before Snakemake uses them: strict YAML and one-line schema errors
(where ``results_dir`` may be: :mod:`tokstudy.workflow.results_dir`).

Snakemake's own loader accepts a duplicated key (the last one wins) and reports a schema
error as a dump of the whole schema; these checks turn both into one line naming the file
or key.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tokstudy.errors import TokstudyError

#: most values (mappings, lists and scalars, every alias expanded) a config may hold: far
#: above any study's, far below what an alias bomb expands to
MAX_CONFIG_VALUES = 100_000
#: longest schema error message shown (the offending value cut short)
MAX_MESSAGE = 300


def expanded_size(value: Any, where: str, limit: int = MAX_CONFIG_VALUES) -> int:
    """How many values ``value`` holds with every YAML alias expanded (a shared list counted
    each time it is used), computed once per shared object; a one-line
    :class:`TokstudyError` naming ``where`` when over ``limit``, cyclic or nested too deep."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(item: Any) -> int:
        if not isinstance(item, dict | list):
            return 1
        if id(item) in sizes:
            return sizes[id(item)]
        if id(item) in open_:
            raise TokstudyError(f"{where}: a value that contains itself (a recursive alias)")
        open_.add(id(item))
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                raise TokstudyError(
                    f"{where}: more than {limit} values once its aliases are expanded "
                    "(an alias bomb?)"
                )
        open_.discard(id(item))
        sizes[id(item)] = total
        return total

    try:
        return size(value)
    except RecursionError:
        raise TokstudyError(f"{where}: values nested too deep") from None


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that rejects a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicated key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_config_file(path: Path) -> Any:
    """A YAML (or JSON) config file; malformed YAML or a duplicated key names file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokstudyError(f"config file {path}: cannot be read ({exc})") from exc
    try:
        loaded = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no arbitrary objects
    except RecursionError:
        raise TokstudyError(f"config file {path}: values nested too deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        raise TokstudyError(f"config file {path}: {place}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise TokstudyError(f"config file {path}: not valid YAML ({exc})") from None
    expanded_size(loaded, f"config file {path}")
    return loaded


def merged_config_files(paths: Iterable[Path]) -> dict[str, Any]:
    """The config files loaded strictly and merged as Snakemake's ``--configfile`` merges
    them (a later file's keys over an earlier one's); a file that is not a mapping is one
    line naming it."""
    from snakemake.utils import update_config

    config: dict[str, Any] = {}
    for path in paths:
        loaded = load_config_file(path)
        if not isinstance(loaded, dict):
            raise TokstudyError(f"config file {path}: not a mapping of keys at the top level")
        update_config(config, loaded)
    return config


def check_config_files(paths: Iterable[Path]) -> None:
    """Load every config file strictly (see :func:`load_config_file`)."""
    for path in paths:
        load_config_file(path)


def check_schema(config: dict[str, Any], schema: dict[str, Any]) -> None:
    """One line for the most relevant schema violation: the key, the problem and, for an
    unknown key, the valid keys. A config too large to check (:func:`expanded_size`) is
    refused before the schema builds a message on it; the message is cut short."""
    expanded_size(config, "config")
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    key = ".".join(str(part) for part in error.absolute_path)
    message = f"config key {key}: {error.message}" if key else f"config: {error.message}"
    if error.validator == "additionalProperties" and "properties" in error.schema:
        message += f"; valid keys: {', '.join(sorted(error.schema['properties']))}"
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    raise TokstudyError(message)


def typed_overrides(overrides: dict[str, Any]) -> dict[str, Any]:
    """Snakemake's ``--config`` values with their nested scalars read as a study file reads
    them.

    Snakemake types a top-level value itself (``seed=7`` is 7) but reads a nested one with
    YAML's base loader, which keeps every scalar as text: ``models={seeds: [0]}`` gives
    ``'0'``, where the same text in a study file gives 0. Nested scalars that YAML reads
    as numbers, booleans or null are read so again; any other text (a date, a mapping's
    text) stays text, and keys stay as given.
    """
    return {
        key: _yaml_scalars(value) if isinstance(value, dict | list) else value
        for key, value in overrides.items()
    }


def _yaml_scalars(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _yaml_scalars(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_yaml_scalars(item) for item in value]
    if not isinstance(value, str) or not value:
        return value
    try:
        read = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    return read if read is None or isinstance(read, int | float) else value
