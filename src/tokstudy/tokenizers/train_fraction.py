"""``train_fraction``: train on a seeded share of a corpus's lines.

The share keeps ``round(fraction · lines)`` lines (at least one), chosen without
replacement by ``numpy``'s generator seeded with the study's seed and kept in corpus
order, so that the same seed draws the same lines and a smaller share of one corpus is
a different sample, not a prefix. The family and size stay fixed while the training text
shrinks (compression moves with it).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from tokstudy.corpus_io import write_text_lines
from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)


def check_fraction(fraction: float, key: str = "train_fraction") -> float:
    """``fraction`` if it lies in (0, 1]; else one line naming ``key``."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise TokstudyError(f"{key} must be a number in (0, 1], got {fraction!r}")
    if not 0 < fraction <= 1:
        raise TokstudyError(f"{key} must be in (0, 1], got {fraction!r}")
    return float(fraction)


def lines_used(total: int, fraction: float) -> int:
    """How many of ``total`` lines a share ``fraction`` keeps (none of none)."""
    return 0 if total == 0 else max(1, round(fraction * total))


def sampled_indices(total: int, fraction: float, seed: int) -> np.ndarray:
    """The indices of the lines kept, ascending."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(total, lines_used(total, fraction), replace=False))


def write_sample(lines: list[str], fraction: float, seed: int, output: Path) -> int:
    """Write the seeded share of ``lines`` to ``output``; return how many were kept."""
    kept = sampled_indices(len(lines), fraction, seed)
    write_text_lines(output, (lines[i] for i in kept))
    log.info("train_fraction %g: training on %d of %d lines", fraction, len(kept), len(lines))
    return len(kept)
