"""Running one workflow step: logging into the rule's log file, one-line errors."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from tokstudy.errors import TokstudyError


def run_step(log_path: str, step: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``step`` with logging to ``log_path``; a :class:`TokstudyError` exits with one line."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(log_path, mode="w", encoding="utf-8"), logging.StreamHandler()],
        force=True,
    )
    try:
        return step(*args, **kwargs)
    except TokstudyError as exc:
        logging.getLogger(step.__module__).error("%s", exc)
        sys.exit(f"error: {exc}")
