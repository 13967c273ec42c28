"""What random cuts would score: the chance level of a boundary score.

A word of ``n`` characters has ``n - 1`` interior positions. A tokenizer that cuts it ``k``
times is compared with ``k`` cuts placed uniformly at random among those positions (without
replacement: every ``k``-subset equally likely). A given position is then cut with
probability ``k / (n - 1)`` (the ``k``-subsets that contain it, ``C(n-2, k-1)``, over all
``C(n-1, k)``), so ``g`` given positions hold ``g k / (n - 1)`` random cuts on average.

A score that is a share of words, or of cuts, is a sum of such indicators divided by a
count that random cuts with the same ``k`` per word leave unchanged (the words cut at
least once, their cuts), so its expected value under random cuts is exact by linearity:
the same sum of ``k / (n - 1)`` over the same count. No sampling is involved.
"""

from __future__ import annotations

import math

from tokstudy.errors import TokstudyError


def cut_chance(length: int, cuts: int) -> float:
    """Probability that a given interior position of a word of ``length`` characters is
    one of ``cuts`` random cuts (``cuts / (length - 1)``; 0 for a word of one character)."""
    positions = length - 1
    if cuts < 0 or cuts > max(positions, 0):
        raise TokstudyError(f"{cuts} cuts do not fit in a word of {length} characters")
    return cuts / positions if positions else 0.0


def above_chance(score: float, chance: float) -> float:
    """``(score - chance) / (1 - chance)``: 0 at chance, 1 for a perfect score; ``nan``
    where chance is 1 (every position cut: the score says nothing) or either is ``nan``."""
    if math.isnan(score) or math.isnan(chance) or chance >= 1.0:
        return float("nan")
    return (score - chance) / (1.0 - chance)
