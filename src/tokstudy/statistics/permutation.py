"""Two-sided stratified permutation p-values (values permuted only within strata, e.g.
tokenizers within one vocabulary size) and the smallest p-value a design can reach.

With one stratum the test is ``scipy.stats.permutation_test(permutation_type="pairings")``
(same orderings from the same generator; tested). It uses scipy's two-sided convention
``p = min(1, 2 × min(P(T* ≤ T), P(T* ≥ T)))`` over the null distribution ``T*``. The test
is exact (every arrangement enumerated, p counted without adjustment) when there are at
most ``n_resamples`` arrangements (and at most :data:`EXACT_LIMIT`); otherwise it draws
``n_resamples`` random ones and each tail is ``(count + 1) / (n_resamples + 1)``.

:func:`unit_permutation_test` permutes whole units (tokenizers) within blocks, the same
permutation in every stratum.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: relative tolerance for equal statistics, as scipy.stats.permutation_test uses
TOLERANCE = np.finfo(float).eps * 100
#: most orderings ever enumerated (memory: one row of indices each); above, Monte Carlo
EXACT_LIMIT = 1_000_000
#: most random orderings held in memory at once
BATCH = 50_000


@dataclass(frozen=True)
class PermutationResult:
    """The observed statistic, its p-value and how the null distribution was formed."""

    statistic: float
    pvalue: float
    exact: bool
    permutations: int


def _groups(strata: Sequence) -> list[np.ndarray]:
    codes = np.unique(np.asarray(strata, dtype=str), return_inverse=True)[1]
    return [np.flatnonzero(codes == code) for code in range(codes.max() + 1)]


def arrangements(strata: Sequence) -> int:
    """How many within-stratum orderings there are: the product of ``n_s!`` over strata."""
    return math.prod(math.factorial(len(group)) for group in _groups(strata))


def is_exact(strata: Sequence, n_resamples: int) -> bool:
    """Whether the stratified test enumerates every ordering: at most ``n_resamples`` of
    them, and at most :data:`EXACT_LIMIT`."""
    return arrangements(strata) <= min(n_resamples, EXACT_LIMIT)


def min_attainable_p(strata: Sequence, n_resamples: int) -> float:
    """The smallest two-sided p the stratified test can give: ``2 / N`` for the exact test
    over ``N`` arrangements (only the observed ordering reaches the most extreme statistic,
    on one side), ``2 / (n_resamples + 1)`` for the Monte Carlo test; at most 1."""
    exact = is_exact(strata, n_resamples)
    return min(1.0, 2 / arrangements(strata) if exact else 2 / (n_resamples + 1))


def _all_orderings(groups: list[np.ndarray], n: int) -> np.ndarray:
    """Every within-stratum ordering, in ``itertools.product`` order over the strata."""
    return _cached_orderings(tuple(tuple(int(i) for i in group) for group in groups), n)


@functools.lru_cache(maxsize=8)
def _cached_orderings(groups: tuple[tuple[int, ...], ...], n: int) -> np.ndarray:
    orderings = [np.array(list(itertools.permutations(group))) for group in groups]
    choice = np.meshgrid(*[np.arange(len(o)) for o in orderings], indexing="ij")
    orders = np.empty((math.prod(len(o) for o in orderings), n), dtype=int)
    for group, ordering, picked in zip(groups, orderings, choice, strict=True):
        orders[:, list(group)] = ordering[picked.ravel()]
    orders.setflags(write=False)
    return orders


def _random_orderings(
    groups: list[np.ndarray], n: int, count: int, rng: np.random.Generator
) -> np.ndarray:
    orders = np.tile(np.arange(n), (count, 1))
    for group in groups:
        orders[:, group] = group[rng.permuted(np.tile(np.arange(len(group)), (count, 1)), axis=-1)]
    return orders


def _null_batches(
    groups: list[np.ndarray], n: int, exact: bool, n_resamples: int, seed: int
) -> Iterator[np.ndarray]:
    """The orderings of the null distribution: all of them at once (exact), or
    ``n_resamples`` random ones from ``default_rng(seed)`` in batches of at most
    :data:`BATCH` (memory: one row of indices per ordering)."""
    if exact:
        yield _all_orderings(groups, n)
        return
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, BATCH):
        yield _random_orderings(groups, n, min(BATCH, n_resamples - start), rng)


def stratified_permutation_test(
    y: np.ndarray, strata: Sequence, statistic: Callable, *, n_resamples: int, seed: int
) -> PermutationResult:
    """Two-sided p of ``statistic(y)`` when ``y`` is permuted only within its stratum.

    ``statistic(batch, axis=-1)`` maps ``(..., n)`` arrays to statistics (the other variable
    is fixed in it). Exact when there are at most ``n_resamples`` within-stratum orderings
    (all enumerated; never more than :data:`EXACT_LIMIT`), otherwise ``n_resamples``
    random ones (generator ``default_rng(seed)``, drawn in batches of :data:`BATCH`).
    """
    y = np.asarray(y, dtype=float)
    groups = _groups(strata)
    exact = is_exact(strata, n_resamples)
    observed = float(statistic(y))
    gamma = abs(TOLERANCE * observed)
    drawn = lower = upper = 0
    for orders in _null_batches(groups, len(y), exact, n_resamples, seed):
        null = statistic(y[orders], axis=-1)
        drawn += len(orders)
        lower += np.count_nonzero(null <= observed + gamma)
        upper += np.count_nonzero(null >= observed - gamma)
    adjustment = 0 if exact else 1
    total = drawn + adjustment
    less, greater = (lower + adjustment) / total, (upper + adjustment) / total
    pvalue = float(np.clip(2 * min(less, greater), 0, 1))
    return PermutationResult(observed, pvalue, exact, drawn)


def unit_permutation_test(
    products: np.ndarray, blocks: Sequence, *, n_resamples: int, seed: int
) -> PermutationResult:
    """Two-sided p of ``T = Σ_u products[u, u]`` when the units (tokenizers) are permuted
    within their blocks: ``T* = Σ_u products[u, π(u)]``. ``products[u, v]`` is what unit
    ``u``'s metric and unit ``v``'s score give together (for a within-strata correlation,
    ``Σ_s x[u, s]·y[v, s]`` over the strata both have), so one permutation applies to every
    stratum at once. :func:`stratified_permutation_test` over the unit indices: exact when
    there are at most ``n_resamples`` orderings, otherwise ``n_resamples`` random ones."""
    products = np.asarray(products, dtype=float)
    units = np.arange(len(products))

    def statistic(orders: np.ndarray, axis: int = -1) -> np.ndarray:
        return products[units, np.asarray(orders).astype(int)].sum(axis=-1)

    return stratified_permutation_test(
        units.astype(float), blocks, statistic, n_resamples=n_resamples, seed=seed
    )
