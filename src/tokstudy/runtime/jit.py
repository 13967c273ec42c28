"""numba's ``njit`` for tokstudy's kernels, and the seconds numba spends compiling them.

Kernels are compiled on their first call and kept in numba's disk cache (``cache=True``).
A fresh checkout, or an edited kernel module, compiles them again: tens of seconds, paid
by whichever job calls them first. Kernel modules take ``njit`` from here, so that the
timer below runs wherever a kernel can be compiled, and :mod:`tokstudy.runtime.job_cost` reports
that one-off apart (``compile_seconds``) instead of letting it pass for the step's own work.
Loading a kernel from the disk cache is not compilation and is not counted.
"""

from __future__ import annotations

from numba import njit
from numba.core import event

__all__ = ["compile_seconds", "njit"]

#: wall time of numba's outermost ``numba:compile`` events (one per cache miss)
_COMPILING = event.TimingListener()
event.register("numba:compile", _COMPILING)


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling numba kernels so far."""
    return _COMPILING.duration if _COMPILING.done else 0.0
