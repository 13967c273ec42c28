"""Path patterns of the planners."""

from __future__ import annotations

from typing import Any


def expand(pattern: str, **values: Any) -> list[str]:
    """``pattern`` filled with every combination of ``values`` (first key slowest)."""
    paths = [pattern]
    for key, options in values.items():
        paths = [path.replace(f"{{{key}}}", str(option)) for path in paths for option in options]
    return paths
