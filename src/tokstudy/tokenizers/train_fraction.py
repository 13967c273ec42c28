"""``train_fraction`` and ``max_train_lines``: train on a seeded share of a corpus's lines.

The share keeps ``round(fraction · lines)`` lines (at least one), at most
``max_train_lines`` of them when that is set, a uniform sample drawn with the study's seed
(:class:`~tokstudy.corpora.subset.SeededSubset`, a chunk at a time) and kept in corpus
order, so that the same seed draws the same lines and a smaller share
of one corpus is a different sample, not a prefix. The family and size stay fixed while
the training text shrinks (compression moves with it). The cap bounds the time and memory
of a trainer that reads all it is given (the Python-side ``bbpe``, HFT, Morfessor and
BPE-knockout, HF ``tokenizers``) on a corpus of gigabytes, as SentencePiece's own
``input_sentence_size`` does for it. The corpus is read twice (counted, then sampled), never
held in memory.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from tokstudy.corpora.subset import SeededSubset
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import count_lines, iter_lines, write_text_lines

log = logging.getLogger(__name__)


def check_fraction(fraction: float, key: str = "train_fraction") -> float:
    """``fraction`` if it lies in (0, 1]; else one line naming ``key``."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise TokstudyError(f"{key} must be a number in (0, 1], got {fraction!r}")
    if not 0 < fraction <= 1:
        raise TokstudyError(f"{key} must be in (0, 1], got {fraction!r}")
    return float(fraction)


def check_max_lines(value: int | None, key: str = "max_train_lines") -> int | None:
    """``value`` if it is ``None`` (no cap) or a whole number ≥ 1; else one line naming ``key``."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise TokstudyError(f"{key} must be a whole number ≥ 1 (or null), got {value!r}")
    return value


def lines_used(total: int, fraction: float, cap: int | None = None) -> int:
    """How many of ``total`` lines a share ``fraction`` keeps, at most ``cap`` (none of none)."""
    used = 0 if total == 0 else max(1, round(fraction * total))
    return used if cap is None else min(used, cap)


def share(total: int, fraction: float, seed: int, cap: int | None = None) -> SeededSubset:
    """The lines kept of ``total``: ``lines_used(total, fraction, cap)`` of them, seeded."""
    return SeededSubset(total, lines_used(total, fraction, cap), seed, "train_fraction")


def sampled_indices(total: int, fraction: float, seed: int, cap: int | None = None) -> np.ndarray:
    """The indices of the lines kept, ascending."""
    return np.fromiter(share(total, fraction, seed, cap).indices(), dtype=np.int64)


def describe_share(kept: int, total: int, fraction: float, cap: int | None) -> str:
    """The log line of a share: what was asked and how many lines it kept."""
    asked = [f"train_fraction {fraction:g}"] if fraction != 1 else []
    asked += [f"max_train_lines {cap:,}"] if cap is not None else []
    return f"{', '.join(asked) or 'all lines'}: training on {kept:,} of {total:,} lines"


def write_sample(
    corpus: Path,
    fraction: float,
    seed: int,
    output: Path,
    cap: int | None = None,
    total: int | None = None,
) -> int:
    """Write the seeded share of the lines of ``corpus`` (at most ``cap``) to ``output``
    (streamed); return how many were kept. ``total``: its line count, when known."""
    total = count_lines(corpus) if total is None else total
    kept = share(total, fraction, seed, cap)
    lines = (line for line, member in zip(iter_lines(corpus), kept, strict=True) if member)
    write_text_lines(output, lines)
    log.info("%s", describe_share(kept.count, total, fraction, cap))
    return kept.count
