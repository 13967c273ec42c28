"""Cost of the phases of one job, measured inside it: wall seconds, CPU seconds, peak memory.

A job that trains a tokenizer and scores it in one process (rule ``train_tokenizer``) writes
one JSON file, ``{phase: {"seconds", "cpu_seconds", "max_rss_mb", "compile_seconds"}}``,
which the cost table reads (:mod:`tokstudy.report.cost`). Wall time is
:func:`time.perf_counter`, CPU time :func:`time.process_time` (every thread of the process),
memory the process's peak resident set so far (:func:`peak_rss_mb`): a later phase's peak
includes the earlier ones'. ``compile_seconds`` is the part of the wall time numba spent
compiling kernels that were not in its disk cache yet (:mod:`tokstudy.runtime.jit`): a one-off of a
fresh checkout, which lands in whichever job runs a kernel first. Timings depend on the
machine and its load: compare them within one run.
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tokstudy.errors import TokstudyError

#: the figures of each phase, named as the cost table's columns
FIGURES = ("seconds", "cpu_seconds", "max_rss_mb", "compile_seconds")
#: the figures every phase file has (files written before ``compile_seconds`` lack it)
REQUIRED_FIGURES = FIGURES[:3]
#: ``ru_maxrss`` unit: KiB on Linux, bytes on macOS
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024
BYTES_PER_MIB = 1024 * 1024
_STATUS = Path("/proc/self/status")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB (MiB, as Snakemake's).

    On Linux ``VmHWM`` of ``/proc/self/status``: ``getrusage``'s ``ru_maxrss`` survives
    ``exec``, so a job process would report the Snakemake process it was forked from.
    Elsewhere ``ru_maxrss``.
    """
    if _STATUS.is_file():
        for line in _STATUS.read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / BYTES_PER_MIB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RSS_UNIT / BYTES_PER_MIB


def compile_seconds() -> float:
    """Seconds numba has spent compiling kernels in this process so far
    (:mod:`tokstudy.runtime.jit`).

    0 when no kernel module was imported: :mod:`tokstudy.runtime.jit` is looked up, not
    imported, so that a job without kernels does not import numba to learn that it
    compiled nothing.
    """
    jit = sys.modules.get("tokstudy.runtime.jit")
    return jit.compile_seconds() if jit is not None else 0.0


class PhaseCosts:
    """Wall, CPU and peak memory of named phases of this process, in the order run."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Measure the ``with`` block as phase ``name``."""
        wall, cpu, compiling = time.perf_counter(), time.process_time(), compile_seconds()
        yield
        self.phases[name] = {
            "seconds": time.perf_counter() - wall,
            "cpu_seconds": time.process_time() - cpu,
            "max_rss_mb": peak_rss_mb(),
            "compile_seconds": compile_seconds() - compiling,
        }

    def write(self, path: Path) -> None:
        """Write the phases as JSON (read back by :func:`read_phase_costs`)."""
        Path(path).write_text(json.dumps(self.phases, indent=2) + "\n", encoding="utf-8")


def read_phase_costs(path: Path) -> dict[str, dict[str, float]]:
    """The phases of a file written by :meth:`PhaseCosts.write`, checked; a file written
    before ``compile_seconds`` was measured has it as NaN (not known)."""
    try:
        phases = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TokstudyError(f"{path}: not a readable phase cost file ({exc})") from None
    valid = isinstance(phases, dict) and all(
        isinstance(figures, dict)
        and set(REQUIRED_FIGURES) <= set(figures) <= set(FIGURES)
        and all(isinstance(value, int | float) for value in figures.values())
        for figures in phases.values()
    )
    if not valid:
        raise TokstudyError(
            f"{path}: not a phase cost file (expected {{phase: {{{', '.join(FIGURES)}}}}})"
        )
    return {
        name: {key: float(figures.get(key, math.nan)) for key in FIGURES}
        for name, figures in phases.items()
    }
