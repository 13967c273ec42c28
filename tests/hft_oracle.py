"""A deliberately simple implementation of HFT learning and segmentation: the oracle.

Same algorithm and tie-breaks as :mod:`tokstudy.tokenizers.hft` (see ``learn.py`` and
``segment.py`` there), written for obviousness, not speed: plain dicts and substrings, every
type re-segmented from scratch in every iteration, no caching. The pre-tokenizer is shared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import pairwise

from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer

INFINITY = float("inf")


def segment_known(text: str, freq: Mapping[str, int]) -> list[str]:
    """Best segmentation of ``text`` (all of its characters are in ``freq``).

    Fewest pieces; then the highest least piece frequency; then longest first piece, then
    longest second piece, and so on.
    """
    n = len(text)
    fewest = [0] * (n + 1)  # fewest pieces for text[i:]
    best_min = [INFINITY] * (n + 1)  # highest least frequency among those
    for i in reversed(range(n)):
        options = [
            (1 + fewest[j], min(freq[text[i:j]], best_min[j]))
            for j in range(i + 1, n + 1)
            if text[i:j] in freq
        ]
        fewest[i] = min(count for count, _ in options)
        best_min[i] = max(least for count, least in options if count == fewest[i])
    pieces = []
    i = 0
    while i < n:
        j = max(
            j
            for j in range(i + 1, n + 1)
            if text[i:j] in freq
            and fewest[j] == fewest[i] - 1
            and freq[text[i:j]] >= best_min[0]
            and best_min[j] >= best_min[0]
        )
        pieces.append(text[i:j])
        i = j
    return pieces


def segment(text: str, freq: Mapping[str, int]) -> list[str | None]:
    """Best segmentation; an unknown character is ``None`` and cuts the text there."""
    pieces: list[str | None] = []
    run = ""
    for char in text:
        if char in freq:
            run += char
            continue
        if run:
            pieces += segment_known(run, freq)
        pieces.append(None)
        run = ""
    if run:
        pieces += segment_known(run, freq)
    return pieces


def count_pretokens(lines: Iterable[str], pretokenizer: Pretokenizer) -> Counter[str]:
    """Count of every pre-token type in ``lines``."""
    return Counter(p for line in lines for p in pretokenizer.pretokenize(line))


def order(freq: Mapping[str, int], marks: Marks) -> list[str]:
    """Marks, then characters, then longer entries, by frequency descending, then string."""
    mark_list = list(marks.as_dict().values())
    rest = sorted(set(freq) - set(mark_list), key=lambda t: (-freq[t], t))
    return mark_list + [t for t in rest if len(t) == 1] + [t for t in rest if len(t) > 1]


def learn(
    word_counts: Mapping[str, int], target: int, marks: Marks, step: int, max_iterations: int = 1000
) -> tuple[list[str], dict[str, int], str]:
    """Tokens in id order, their frequencies, and the outcome ("target", "too_small",
    "saturated")."""
    freq = dict.fromkeys(marks.as_dict().values(), 0)
    for word, count in word_counts.items():
        for char in word:
            freq[char] = freq.get(char, 0) + count
    if target < len(freq):
        return order(freq, marks), freq, "too_small"
    seen = {frozenset(freq.items())}
    pruning = True
    iteration = 0
    while len(freq) < target:
        iteration += 1
        subwords: Counter[str] = Counter()
        candidates: Counter[str] = Counter()
        for word, count in word_counts.items():
            pieces = segment_known(word, freq)
            for piece in pieces:
                subwords[piece] += count
            for left, right in pairwise(pieces):
                candidates[left + right] += count
        ranked = sorted(
            ((c, n) for c, n in candidates.items() if c not in freq), key=lambda x: (-x[1], x[0])
        )
        added = ranked[:step]
        if not added:
            return order(freq, marks), freq, "saturated"
        threshold = added[-1][1]
        freq = {
            t: subwords[t] for t in freq if len(t) == 1 or not pruning or subwords[t] >= threshold
        }
        freq.update(added)
        state = frozenset(freq.items())
        if pruning and (state in seen or iteration >= max_iterations):
            pruning = False
        seen.add(state)
    longer = sorted((t for t in freq if len(t) > 1), key=lambda t: (-freq[t], t))
    keep = set(freq) - set(longer[len(longer) - max(0, len(freq) - target) :])
    freq = {t: n for t, n in freq.items() if t in keep}
    return order(freq, marks), freq, "target"


def encode(text: str, pretokenizer: Pretokenizer, tokens: list[str], freq: Mapping[str, int]):
    """Vocabulary indices of ``text`` (``-1`` for an unknown character)."""
    index = {token: i for i, token in enumerate(tokens)}
    return [
        -1 if piece is None else index[piece]
        for pretoken in pretokenizer.pretokenize(text)
        for piece in segment(pretoken, freq)
    ]
