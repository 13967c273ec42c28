"""Running one workflow step: the step a rule names, logging into the rule's log file,
one-line errors."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from tokstudy.errors import TokstudyError, one_line
from tokstudy.workflow.binder import bound_arguments, imported_function


def _not_the_failure(record: logging.LogRecord) -> bool:
    """Keep the failure record off the console: the one ``error:`` line stands for it."""
    return not getattr(record, "step_failure", False)


def run_step(log_path: str, step: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``step`` with logging to ``log_path``; any exception exits with one line.

    The rule's log gets the message, the step's arguments (its files and URLs) and, for
    an unexpected exception, the traceback; stderr gets only ``error: <message>``.
    """
    console = logging.StreamHandler()
    console.addFilter(_not_the_failure)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(log_path, mode="w", encoding="utf-8"), console],
        force=True,
    )
    log = logging.getLogger(step.__module__)
    log.info("%s: started", step.__name__)
    started = time.perf_counter()
    try:
        result = step(*args, **kwargs)
    except Exception as exc:  # every failure of a step becomes one line
        message = one_line(exc)
        log.error(
            "%s failed: %s\narguments: %r %r",
            step.__name__,
            message,
            args,
            kwargs,
            exc_info=not isinstance(exc, TokstudyError),
            extra={"step_failure": True},
        )
        sys.exit(f"error: {message}")
    log.info("%s: finished in %.1f s", step.__name__, time.perf_counter() - started)
    return result


def use_job_threads(threads: int) -> None:
    """torch computes on the job's cores, when the job's function imported torch (the model
    jobs; the others never import it)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def run_named_step(snakemake: Any) -> None:
    """Run the library function ``snakemake.params.step`` names
    (``tokstudy.<package>.<module>:<function>``), called with the job's entries of its
    parameters' names (:mod:`tokstudy.workflow.binder`) and logging to the rule's log: what
    ``workflow/scripts/run_step.py``, the script of every rule, does."""
    function = imported_function(snakemake.params.step)
    try:
        arguments = bound_arguments(function, snakemake)
    except TokstudyError as exc:  # a rule and its function that do not match
        sys.exit(f"error: {one_line(exc)}")
    use_job_threads(snakemake.threads)
    run_step(snakemake.log[0], function, **arguments)
