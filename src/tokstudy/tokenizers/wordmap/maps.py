"""Word maps (Jung, 2023): where a target word shares its edges with other words.

A *word map* compares a target word with one other word character by character, with the
two words aligned at the left end or at the right end; the shorter word is padded and a
padding position never matches. A map is made only when the aligned end characters match
(first characters for the left alignment, last characters for the right one), so a pair
yields zero, one or two maps. Maps have the target's length: ``1`` where the characters
match, ``0`` elsewhere.

*Cleaning* keeps only the runs of ``1`` that touch either end of a map and sets every inner
``1`` to ``0`` (``11101100101`` → ``11100000001``): only a shared prefix or a shared
suffix is evidence for an affix, a letter matching by chance in the middle is not.

:func:`word_maps` and :func:`clean_map` state these definitions for one pair of words;
:class:`LexemeMatrix` computes the same for a whole lexeme list at once with ``numpy``
(the tests check that the two agree).

Choices the thesis leaves open, made here:

- Words are compared after lower-casing (German capitalises sentence-initial verbs).
- When the two words have the same length both alignments compare the same characters;
  the pair then gives one map, not the same map twice.
- A target is never compared with itself (an identical word adds 1 to every position,
  which would not change the z-scores anyway).
- A cleaned map is at most a leading run and a trailing run of ``1``. The two are summed
  per target position **separately**: the leading runs (``prefix`` sums) are evidence for a
  prefix, the trailing runs (``suffix`` sums) for a suffix; together they are the summed
  cleaned maps. (A map of all ``1`` adds one to every position of both sums, which leaves
  their z-scores unchanged.) A single sum is dominated by the inflectional endings that
  nearly every verb shares, so a common prefix never rises above its mean: on UD German
  GSD, ``verstehen`` splits as ``versteh|en`` with one sum and ``ver|steh|en`` with two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PAD_CODE = -1


@dataclass(frozen=True)
class WordMaps:
    """The (uncleaned) maps of a target against one word; ``None`` where no map is made."""

    left: str | None
    right: str | None


def _compare(target: str, other: str) -> str:
    return "".join("1" if i < len(other) and other[i] == ch else "0" for i, ch in enumerate(target))


def word_maps(target: str, other: str) -> WordMaps:
    """Left- and right-aligned maps of ``target`` against ``other`` as ``0``/``1`` strings."""
    target, other = target.lower(), other.lower()
    if not target or not other:
        return WordMaps(None, None)
    left = _compare(target, other) if target[0] == other[0] else None
    right = None
    if target[-1] == other[-1] and not (left is not None and len(target) == len(other)):
        right = _compare(target[::-1], other[::-1])[::-1]
    return WordMaps(left, right)


def clean_map(bits: str) -> str:
    """Keep the runs of ``1`` at both ends of a map, zero the inner ones."""
    lead = len(bits) - len(bits.lstrip("1"))
    trail = len(bits) - len(bits.rstrip("1"))
    if lead == len(bits):
        return bits
    return "1" * lead + "0" * (len(bits) - lead - trail) + "1" * trail


@dataclass(frozen=True)
class PositionalCounts:
    """Summed cleaned maps of one target: their leading runs and their trailing runs."""

    prefix: np.ndarray
    suffix: np.ndarray


class LexemeMatrix:
    """A lexeme list as padded code-point matrices, for vectorised word maps.

    Row ``i`` of ``left_codes`` holds lexeme ``i`` left-aligned, row ``i`` of
    ``right_codes`` right-aligned, both cut or padded to ``width`` columns (the longest
    target that will be compared needs no more).
    """

    def __init__(self, lexemes: Sequence[str], width: int) -> None:
        self.lexemes = [word.lower() for word in lexemes]
        self.index = {word: i for i, word in enumerate(self.lexemes)}
        self.width = width
        self.lengths = np.array([len(word) for word in self.lexemes], dtype=np.int64)
        self.left_codes = np.full((len(self.lexemes), width), PAD_CODE, dtype=np.int32)
        self.right_codes = np.full((len(self.lexemes), width), PAD_CODE, dtype=np.int32)
        for row, word in enumerate(self.lexemes):
            codes = _codes(word)
            self.left_codes[row, : min(width, len(codes))] = codes[:width]
            tail = codes[-width:]
            self.right_codes[row, width - len(tail) :] = tail

    def counts(self, target: str) -> PositionalCounts:
        """Summed runs of the cleaned maps of ``target`` against every other lexeme."""
        target = target.lower()
        size = len(target)
        if size == 0 or size > self.width:
            raise ValueError(f"target {target!r} is empty or longer than {self.width} characters")
        codes = _codes(target)
        keep = np.ones(len(self.lexemes), dtype=bool)
        if target in self.index:
            keep[self.index[target]] = False
        left = self.left_codes[:, :size]
        right = self.right_codes[:, self.width - size :]
        left_made = keep & (left[:, 0] == codes[0])
        same_length = self.lengths == size
        right_made = keep & (right[:, -1] == codes[-1]) & ~(same_length & left_made)
        maps = np.concatenate([left[left_made] == codes, right[right_made] == codes])
        leading = np.logical_and.accumulate(maps, axis=1)
        trailing = np.logical_and.accumulate(maps[:, ::-1], axis=1)[:, ::-1]
        return PositionalCounts(
            prefix=leading.sum(axis=0).astype(np.int64),
            suffix=trailing.sum(axis=0).astype(np.int64),
        )


def _codes(word: str) -> np.ndarray:
    return np.fromiter((ord(ch) for ch in word), dtype=np.int32, count=len(word))
