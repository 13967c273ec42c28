"""One pending wake-up of Snakemake's scheduler loop (:mod:`tokstudy.workflow.scheduler_wakeups`),
against Snakemake's own method, which wakes the loop once per call."""

from __future__ import annotations

import logging
import threading
import time
from importlib.metadata import version
from types import SimpleNamespace

from snakemake.scheduling.job_scheduler import JobScheduler

from tokstudy.workflow.scheduler_wakeups import (
    REEVALUATION,
    keep_one_wakeup,
    missing_private_names,
    schedule_one_wakeup,
)


def _wakeups(schedule, calls: int, delay: float = 0.5) -> int:
    """How often ``calls`` requests in a row wake a scheduler's loop (its semaphore)."""
    scheduler = SimpleNamespace(_open_jobs=threading.Semaphore(0))
    for _ in range(calls):
        schedule(scheduler, delay)
    time.sleep(delay + 0.5)
    woken = 0
    while scheduler._open_jobs.acquire(blocking=False):
        woken += 1
    return woken


def test_snakemakes_own_method_wakes_the_loop_once_per_call() -> None:
    # the storm: every pass schedules one more wake-up, none is dropped
    assert _wakeups(getattr(JobScheduler, REEVALUATION), 40) == 40


def test_requests_while_one_is_pending_wake_the_loop_once() -> None:
    assert _wakeups(schedule_one_wakeup, 40) == 1


def test_a_request_after_the_wakeup_schedules_the_next_one() -> None:
    scheduler = SimpleNamespace(_open_jobs=threading.Semaphore(0))
    schedule_one_wakeup(scheduler, 0.01)
    assert scheduler._open_jobs.acquire(timeout=2)
    time.sleep(0.05)
    schedule_one_wakeup(scheduler, 0.01)
    assert scheduler._open_jobs.acquire(timeout=2)  # not swallowed as "pending"


def test_the_wakeup_timer_does_not_hold_the_interpreter_open() -> None:
    scheduler = SimpleNamespace(_open_jobs=threading.Semaphore(0))
    schedule_one_wakeup(scheduler, 30)
    assert scheduler.tokstudy_pending_wakeup.daemon


def test_snakemakes_scheduler_takes_it(monkeypatch) -> None:
    monkeypatch.setattr(JobScheduler, REEVALUATION, getattr(JobScheduler, REEVALUATION))
    assert keep_one_wakeup()
    assert getattr(JobScheduler, REEVALUATION) is schedule_one_wakeup


def test_snakemakes_private_names_are_where_the_patch_expects_them() -> None:
    assert missing_private_names() == [], (
        f"Snakemake {version('snakemake')} moved {missing_private_names()}: "
        "tokstudy.workflow.scheduler_wakeups patches them (supported range in pyproject.toml)"
    )


def test_a_snakemake_without_the_method_is_left_alone_and_named(monkeypatch, caplog) -> None:
    monkeypatch.setattr(JobScheduler, REEVALUATION, None)  # the name moved
    with caplog.at_level(logging.WARNING, logger="tokstudy.workflow.scheduler_wakeups"):
        assert not keep_one_wakeup()
    assert f"Snakemake {version('snakemake')}'s scheduler has no " in caplog.text
    assert f"JobScheduler.{REEVALUATION}" in caplog.text
    assert getattr(JobScheduler, REEVALUATION) is None  # left alone
