"""The whitespace-separated words of a batch of lines, found with numpy.

A word is a maximal run of characters that are not whitespace in the sense of
``str.isspace`` (the words of ``str.split()`` and of the regular expression ``\\S+``).
The batch is handled as one text, its lines joined by ``"\\n"``, so that one array
operation finds the words of every line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: every whitespace code point is below this one (the highest is U+3000)
_SPACE_LIMIT = 0x3001
#: ``_IN_WORD[c]``: code point ``c`` is not whitespace (any ``c >= _SPACE_LIMIT`` reads the
#: last entry, through ``np.take(..., mode="clip")``)
_IN_WORD = np.array([not chr(c).isspace() for c in range(_SPACE_LIMIT)] + [True])


@dataclass(frozen=True)
class BatchWords:
    """Where the words of a batch of lines are, in the lines joined by ``"\\n"``.

    ``line_starts[i]``: offset of line ``i`` in that text; ``begins``/``ends``: the words'
    character spans in it, in order; ``first[i]``/``counts[i]``: index of line ``i``'s
    first word and its number of words.
    """

    line_starts: np.ndarray
    begins: np.ndarray
    ends: np.ndarray
    first: np.ndarray
    counts: np.ndarray


def batch_words(lines: Sequence[str]) -> BatchWords:
    """The words of every line of ``lines`` (see :class:`BatchWords`)."""
    text = "\n".join(lines).encode("utf-32-le", "surrogatepass")
    codes = np.frombuffer(text, dtype=np.uint32)
    in_word = np.take(_IN_WORD, codes, mode="clip")
    edges = np.diff(np.concatenate(([False], in_word, [False])).astype(np.int8))
    begins, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    line_starts = np.cumsum(lengths + 1) - (lengths + 1)
    first = np.searchsorted(begins, line_starts)
    counts = np.searchsorted(begins, line_starts + lengths) - first
    return BatchWords(line_starts, begins, ends, first, counts)
