"""One pending wake-up of Snakemake's scheduler loop, not one more per finished job.

Snakemake 9 (checked on 9.27) rate-limits job starts (``--max-jobs-per-timespan``, default
``100/1s``). Every pass of its scheduler loop then starts a timer thread that wakes the loop
again after the timespan, and every finished job wakes it too. Each wake-up is a pass that
starts a timer, so the timers never drop in number and grow by one per finished job: after
n jobs the loop makes about n passes a second, each starting a thread and re-reading the
ready jobs (the extra wake-ups are discussed upstream in snakemake/snakemake#3744). In the
HFT-2022 study (630 cells on 2 cores) the Snakemake process held 20–33 % of one core by
the end, time the cell jobs lost (``docs/benchmarks.md``).

:func:`keep_one_wakeup` makes the re-evaluation a single pending daemon timer: the loop
still wakes at least once per timespan while it asks to, and on every finished job, as
before; a run still ends at once (a daemon timer does not hold the interpreter open).
"""

from __future__ import annotations

import inspect
import logging
import threading
from importlib.metadata import version
from typing import Any

from snakemake.scheduling.job_scheduler import JobScheduler

log = logging.getLogger(__name__)

#: Snakemake's own spelling of the method that schedules a wake-up
REEVALUATION = "_schedule_reevalutation"
#: the scheduler's semaphore that a wake-up releases (set in ``JobScheduler.__init__``)
OPEN_JOBS = "_open_jobs"
_PENDING = "tokstudy_pending_wakeup"
_LOCK = threading.Lock()


def schedule_one_wakeup(scheduler: Any, delay: float) -> None:
    """Wake ``scheduler``'s loop after ``delay`` seconds unless a wake-up is pending."""
    with _LOCK:
        if getattr(scheduler, _PENDING, None) is not None:
            return
        timer = threading.Timer(delay, _wake, args=(scheduler,))
        timer.daemon = True
        setattr(scheduler, _PENDING, timer)
    timer.start()


def _wake(scheduler: Any) -> None:
    with _LOCK:
        setattr(scheduler, _PENDING, None)
    getattr(scheduler, OPEN_JOBS).release()


def missing_private_names() -> list[str]:
    """The private names of Snakemake's ``JobScheduler`` this patch relies on that the
    installed Snakemake lacks (none on the supported versions, pinned in pyproject.toml)."""
    missing = []
    if not callable(getattr(JobScheduler, REEVALUATION, None)):
        missing.append(f"JobScheduler.{REEVALUATION}")
    if f"self.{OPEN_JOBS} =" not in inspect.getsource(JobScheduler.__init__):
        missing.append(f"JobScheduler.{OPEN_JOBS}")
    return missing


def keep_one_wakeup() -> bool:
    """Give Snakemake's scheduler :func:`schedule_one_wakeup`; whether it had the private
    names it needs (a Snakemake without them is left alone, and the log names them)."""
    if missing := missing_private_names():
        log.warning(
            "Snakemake %s's scheduler has no %s: its wake-ups are left as they are",
            version("snakemake"),
            ", ".join(missing),
        )
        return False
    setattr(JobScheduler, REEVALUATION, schedule_one_wakeup)
    return True
