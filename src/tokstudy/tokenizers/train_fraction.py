"""``train_fraction``: train on a seeded share of a corpus's lines.

The share keeps ``round(fraction · lines)`` lines (at least one), a uniform sample drawn
with the study's seed (:class:`~tokstudy.corpora.subset.SeededSubset`, a chunk at a time)
and kept in corpus order, so that the same seed draws the same lines and a smaller share
of one corpus is a different sample, not a prefix. The family and size stay fixed while
the training text shrinks (compression moves with it). The corpus is read twice (counted,
then sampled), never held in memory.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from tokstudy.corpora.subset import SeededSubset
from tokstudy.corpus_io import count_lines, iter_lines, write_text_lines
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


def share(total: int, fraction: float, seed: int) -> SeededSubset:
    """The lines kept of ``total``: ``lines_used(total, fraction)`` of them, seeded."""
    return SeededSubset(total, lines_used(total, fraction), seed, "train_fraction")


def sampled_indices(total: int, fraction: float, seed: int) -> np.ndarray:
    """The indices of the lines kept, ascending."""
    return np.fromiter(share(total, fraction, seed).indices(), dtype=np.int64)


def write_sample(corpus: Path, fraction: float, seed: int, output: Path) -> int:
    """Write the seeded share of the lines of ``corpus`` to ``output`` (streamed); return
    how many were kept."""
    total = count_lines(corpus)
    kept = share(total, fraction, seed)
    lines = (line for line, member in zip(iter_lines(corpus), kept, strict=True) if member)
    write_text_lines(output, lines)
    log.info("train_fraction %g: training on %d of %d lines", fraction, kept.count, total)
    return kept.count
