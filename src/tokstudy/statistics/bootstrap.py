"""Percentile bootstrap intervals (``scipy.stats.bootstrap``), the hierarchical bootstrap
of cells and their seeds, and the two-sided bootstrap p-value of a paired difference."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

Statistic = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Interval:
    """A percentile interval and the bootstrap distribution it was read from.

    ``degenerate`` counts resamples whose statistic is undefined (NaN, e.g. a constant
    resampled column); they are left out of the percentiles.
    """

    low: float
    high: float
    distribution: np.ndarray
    degenerate: int


def _percentile_interval(distribution: np.ndarray, confidence: float) -> Interval:
    degenerate = int(np.isnan(distribution).sum())
    if degenerate == len(distribution):
        return Interval(np.nan, np.nan, distribution, degenerate)
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(distribution, [tail, 100 - tail])
    return Interval(float(low), float(high), distribution, degenerate)


def bootstrap_interval(
    data: Sequence[np.ndarray],
    statistic: Statistic,
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    vectorized: bool = True,
) -> Interval:
    """Percentile interval of ``statistic`` over paired resamples of ``data``
    (``scipy.stats.bootstrap(..., paired=True, method="percentile")``, generator
    ``numpy.random.default_rng(seed)``); NaN resamples are left out and counted."""
    with warnings.catch_warnings():  # NaN resamples are counted and left out below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            tuple(np.asarray(column) for column in data),
            statistic,
            paired=True,
            vectorized=vectorized,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return _percentile_interval(np.asarray(result.bootstrap_distribution), confidence)


def hierarchical_interval(
    columns: Sequence[np.ndarray],
    replicates: Sequence[np.ndarray],
    statistic: Statistic,
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> Interval:
    """Percentile interval of ``statistic(*columns, score, axis=-1)`` under a two-level
    bootstrap: cells are resampled with replacement (``scipy.stats.bootstrap`` over cell
    indices, generator ``default_rng(seed)``), then each drawn cell's replicates (its seeds'
    scores) are resampled with replacement (generator ``default_rng([seed, 1])``) and
    averaged into the cell's score.

    ``columns`` hold one value per cell; ``replicates[i]`` the scores of cell ``i``'s seeds.
    With one replicate per cell this is the plain paired bootstrap of ``(*columns, means)``.
    """
    counts = np.array([len(values) for values in replicates])
    if counts.min() < 1:
        raise ValueError("every cell needs at least one replicate")
    table = np.zeros((len(replicates), counts.max()))
    for row, values in enumerate(replicates):
        table[row, : len(values)] = values
    means = np.array([np.mean(values) for values in replicates])
    fixed = [np.asarray(column, dtype=float) for column in columns]
    inner = np.random.default_rng([seed, 1])

    def resampled(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        indices = np.asarray(indices)
        if indices.ndim == 1 or counts.max() == 1:
            scores = means[indices]
        else:
            drawn = counts[indices]
            picks = np.floor(inner.random((*indices.shape, counts.max())) * drawn[..., None])
            values = table[indices[..., None], picks.astype(int)]
            used = np.arange(counts.max()) < drawn[..., None]
            scores = np.where(used, values, 0.0).sum(axis=-1) / drawn
        return statistic(*(column[indices] for column in fixed), scores, axis=axis)

    return bootstrap_interval(
        (np.arange(len(replicates)),),
        resampled,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def paired_bootstrap_p(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value that a paired difference is zero, from its bootstrap
    distribution: ``min(1, 2 × min(P(Δ ≤ 0), P(Δ ≥ 0)))``, each tail add-one smoothed
    (``(count + 1) / (B + 1)``, so it is never 0)."""
    differences = np.asarray(differences)
    total = len(differences) + 1
    not_better = (np.sum(differences <= 0) + 1) / total
    not_worse = (np.sum(differences >= 0) + 1) / total
    return float(min(1.0, 2 * min(not_better, not_worse)))
