"""Running one workflow step: logging into the rule's log file, one-line errors."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError


def run_step(log_path: str, step: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``step`` with logging to ``log_path``; a :class:`TokstudyError` exits with one line."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[
            logging.FileHandler(log_path, mode="w", encoding="utf-8"),
            logging.StreamHandler(),
        ],
        force=True,
    )
    log = logging.getLogger(step.__module__)
    log.info("%s: started", step.__name__)
    started = time.perf_counter()
    try:
        result = step(*args, **kwargs)
    except TokstudyError as exc:
        log.error("%s", exc)
        sys.exit(f"error: {exc}")
    log.info("%s: finished in %.1f s", step.__name__, time.perf_counter() - started)
    return result


def optional_path(value: Any) -> Path | None:
    """A rule's input or output as a path; ``None`` for an empty one (an optional input)."""
    return Path(value) if value else None
