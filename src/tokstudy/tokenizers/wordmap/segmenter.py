"""The Wordmap segmenter: the best left-to-right segmentation from a segment vocabulary.

A segmentation ``s = (s_1, …, s_k)`` of a word of ``t`` characters is valid when every
segment is in the vocabulary, with two exceptions and one restriction from the thesis:

- the first segment is never a single character;
- the final segment may be one character that is not in the vocabulary ("one missing
  final character accepted"; it still counts as a segment in the score);
- a word with no valid segmentation stays whole (as does a word shorter than 2).

Among valid segmentations the one with the largest
``f(s) = Σ_i ((|s_i| / t) / k) ** (1 / |s_i|)`` is chosen. The score of a segment depends
only on its length and on ``k``, so for each ``k`` the best segmentation is found by a
memoised recursion over (start position, segments left): the same argmax as enumerating
every segmentation, in ``O(t · k · L)`` steps per ``k`` (``L`` the longest vocabulary
entry) instead of exponentially many. ``max_segments`` bounds ``k``.

Ties (equal scores up to 1e-12) go to fewer segments, then to the shorter earlier segment.
Matching is case-insensitive; the returned segments keep the word's own characters.
"""

from __future__ import annotations

from collections.abc import Iterable

SCORE_TOLERANCE = 1e-12


class Segmenter:
    """Segments words with a fixed vocabulary of functional and lexemic parts."""

    def __init__(self, entries: Iterable[str], max_segments: int = 8) -> None:
        self.entries = frozenset(entry.lower() for entry in entries if entry)
        self.max_segments = max_segments
        self.longest = max((len(entry) for entry in self.entries), default=0)
        self._cache: dict[str, tuple[int, ...]] = {}

    def segment(self, word: str) -> tuple[str, ...]:
        """The segments of ``word`` (the word alone when no segmentation is valid)."""
        pieces = []
        start = 0
        for size in self.lengths(word):
            pieces.append(word[start : start + size])
            start += size
        return tuple(pieces)

    def lengths(self, word: str) -> tuple[int, ...]:
        """Segment lengths of the best segmentation of ``word`` (cached per word)."""
        if word not in self._cache:
            self._cache[word] = self._best_lengths(word.lower())
        return self._cache[word]

    def _best_lengths(self, word: str) -> tuple[int, ...]:
        size = len(word)
        best: tuple[float, tuple[int, ...]] | None = None
        if size >= 2:
            for count in range(1, min(self.max_segments, size) + 1):
                found = self._best_with(word, count)
                if found is not None and (best is None or found[0] > best[0] + SCORE_TOLERANCE):
                    best = found
        return best[1] if best is not None else (size,)

    def _best_with(self, word: str, count: int) -> tuple[float, tuple[int, ...]] | None:
        """Best segmentation of ``word`` into exactly ``count`` segments."""
        size = len(word)
        memo: dict[tuple[int, int], tuple[float, tuple[int, ...]] | None] = {}

        def gain(length: int) -> float:
            return ((length / size) / count) ** (1.0 / length)

        def best_from(start: int, left: int) -> tuple[float, tuple[int, ...]] | None:
            key = (start, left)
            if key in memo:
                return memo[key]
            remaining = size - start
            result = None
            if left == 1:
                last = word[start:]
                allowed = last in self.entries and (start > 0 or remaining >= 2)
                if allowed or (remaining == 1 and start > 0):
                    result = (gain(remaining), (remaining,))
            else:
                shortest = 2 if start == 0 else 1
                for length in range(shortest, min(self.longest, remaining - left + 1) + 1):
                    if word[start : start + length] not in self.entries:
                        continue
                    rest = best_from(start + length, left - 1)
                    if rest is None:
                        continue
                    candidate = (gain(length) + rest[0], (length, *rest[1]))
                    if result is None or candidate[0] > result[0] + SCORE_TOLERANCE:
                        result = candidate
            memo[key] = result
            return result

        return best_from(0, count)
