"""The one home of the study's defaults: the value of every key a study may leave out.

The JSON schema (``workflow/schemas/config.schema.yaml``) checks shapes only and holds no
``default:``; :func:`with_defaults` fills these in when the
:class:`~tokstudy.workflow.study.core.Study` is built, so the rules, the planners and the
tests all see the same values (``tests/test_study_planners.py`` holds that each default has
this one home).
"""

from __future__ import annotations

import copy
from typing import Any

from tokstudy.corpora.prepare import MAX_LINE_BYTES

#: top-level keys and the keys of always-present sections
DEFAULTS: dict[str, Any] = {
    "seed": 42,
    "results_dir": "results",
    "data_root": None,
    "cell_costs": None,
    "train_sizes_together": False,
    "size_policy": "error",
    "max_train_lines": None,
    "corpus_defaults": {
        "heldout": 0.1,
        "max_lines": None,
        "max_bytes": None,
        "take": "leading",
        "file_format": "text",
        "field": "text",
        "on_invalid_utf8": "error",
        "max_line_bytes": MAX_LINE_BYTES,
        "normalize": "none",
        "file_pattern": "{language}.txt.gz",
    },
    "plots": {"skip_top_ranks": 100},
    "resources": {},
}

#: keys of optional sections, filled in only where the study has the section
SECTION_DEFAULTS: dict[tuple[str, ...], dict[str, Any]] = {
    ("analyses", "multilingual"): {"temperature": 5.0},
    ("analyses", "parity", "udhr"): {"reference": "eng"},
    ("analyses", "numbers"): {"per_length": 50},
    ("analyses", "robustness"): {"sentences": 200, "rate": 0.2},
}


def _merged(defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` over ``defaults``, nested mappings merged key by key."""
    merged = copy.deepcopy(defaults)
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def with_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of a validated config with every default filled in (``config`` is unchanged)."""
    resolved = _merged(DEFAULTS, config)
    for path, defaults in SECTION_DEFAULTS.items():
        parent = resolved
        for key in path[:-1]:
            parent = parent.get(key) or {}
        section = parent.get(path[-1])
        if isinstance(section, dict):
            parent[path[-1]] = _merged(defaults, section)
    return resolved
