"""A seeded uniform subset of ``count`` of the indices ``0 … total-1``, drawn in index
order with one chunk in memory: the held-out lines of a corpus and a seeded share of it.

Each chunk of ``CHUNK`` indices takes its number of members from the hypergeometric
distribution of the members still to place among the indices still to visit, then that
many positions uniformly within the chunk (``numpy``'s generator, seeded): every subset of
``count`` indices is equally likely (sequential sampling without replacement), the memory
is one chunk whatever ``total`` is, and the same seed draws the same subset.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from tokstudy.errors import TokstudyError

#: indices decided at a time
CHUNK = 1 << 16
#: ``numpy``'s hypergeometric draws take fewer than 10⁹ good and bad items
MAX_TOTAL = 10**9


class SeededSubset:
    """``count`` of ``total`` indices, uniformly and reproducibly drawn (module docstring).

    ``seed`` is anything :func:`numpy.random.default_rng` takes (an int, or a list of ints
    to keep two subsets of one study seed apart).
    """

    def __init__(self, total: int, count: int, seed: int | list[int], what: str = "") -> None:
        if not 0 <= count <= total:
            raise TokstudyError(f"{what or 'subset'}: {count} of {total} items cannot be drawn")
        if total >= MAX_TOTAL:
            raise TokstudyError(
                f"{what or 'subset'}: {total:,} lines; a seeded draw takes fewer than "
                f"{MAX_TOTAL:,} (cap the corpus with max_lines or max_bytes)"
            )
        self.total = total
        self.count = count
        self.seed = seed

    def chunks(self) -> Iterator[np.ndarray]:
        """Membership (booleans) of consecutive chunks of the indices, in order."""
        rng = np.random.default_rng(self.seed)
        left, members = self.total, self.count
        for start in range(0, self.total, CHUNK):
            size = min(CHUNK, self.total - start)
            taken = members if size == left else 0
            if members > 0 and size < left:
                taken = int(rng.hypergeometric(members, left - members, size))
            mask = np.zeros(size, dtype=bool)
            mask[rng.choice(size, taken, replace=False)] = True
            left, members = left - size, members - taken
            yield mask

    def __iter__(self) -> Iterator[bool]:
        """Whether index 0, 1, 2, … is a member."""
        for mask in self.chunks():
            yield from mask.tolist()

    def indices(self) -> Iterator[int]:
        """The members, ascending."""
        for number, mask in enumerate(self.chunks()):
            yield from (np.flatnonzero(mask) + number * CHUNK).tolist()
