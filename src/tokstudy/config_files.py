"""Study config files before Snakemake uses them: strict YAML and one-line schema errors
(where ``results_dir`` may be: :mod:`tokstudy.results_dir`).

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
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        place = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        raise TokstudyError(f"config file {path}: {place}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise TokstudyError(f"config file {path}: not valid YAML ({exc})") from None


def check_config_files(paths: Iterable[Path]) -> None:
    """Load every config file strictly (see :func:`load_config_file`)."""
    for path in paths:
        load_config_file(path)


def check_schema(config: dict[str, Any], schema: dict[str, Any]) -> None:
    """One line for the most relevant schema violation: the key, the problem and, for an
    unknown key, the valid keys."""
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    key = ".".join(str(part) for part in error.absolute_path)
    message = f"config key {key}: {error.message}" if key else f"config: {error.message}"
    if error.validator == "additionalProperties" and "properties" in error.schema:
        message += f"; valid keys: {', '.join(sorted(error.schema['properties']))}"
    raise TokstudyError(message)
