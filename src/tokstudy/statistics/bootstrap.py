"""Percentile bootstrap intervals (``scipy.stats.bootstrap``), the cluster bootstrap
(tokenizers with all their cells, then seeds within cells), and the two-sided bootstrap
p-value of a paired difference."""

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
    paired: bool = True,
) -> Interval:
    """Percentile interval of ``statistic`` over paired resamples of ``data``
    (``scipy.stats.bootstrap(..., paired=True, method="percentile")``, generator
    ``numpy.random.default_rng(seed)``; ``paired=False``: each sample resampled on its own);
    NaN resamples are left out and counted."""
    with warnings.catch_warnings():  # NaN resamples are counted and left out below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            tuple(np.asarray(column) for column in data),
            statistic,
            paired=paired,
            vectorized=vectorized,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return _percentile_interval(np.asarray(result.bootstrap_distribution), confidence)


def _seed_means(replicates: Sequence[np.ndarray], seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """A function from drawn cell indices ``(..., m)`` to their scores: each drawn cell's
    replicates (its seeds' scores) resampled with replacement (generator
    ``default_rng([seed, 1])``) and averaged; with one replicate per cell, the cell's score;
    NaN for a cell without one."""
    counts = np.array([len(values) for values in replicates])
    table = np.zeros((len(replicates), max(counts.max(), 1)))
    for row, values in enumerate(replicates):
        table[row, : len(values)] = values
    means = np.array([np.mean(values) if len(values) else np.nan for values in replicates])
    inner = np.random.default_rng([seed, 1])

    def scores(cells: np.ndarray) -> np.ndarray:
        if counts.max() <= 1:
            return means[cells]
        drawn = counts[cells]
        picks = np.floor(inner.random((*cells.shape, counts.max())) * drawn[..., None])
        values = table[cells[..., None], picks.astype(int)]
        used = np.arange(counts.max()) < drawn[..., None]
        with np.errstate(invalid="ignore"):  # a cell without replicates: 0 / 0 is NaN
            return np.where(used, values, 0.0).sum(axis=-1) / drawn

    return scores


def cluster_interval(
    columns: Sequence[np.ndarray],
    replicates: Sequence[np.ndarray],
    clusters: Sequence[Sequence[int]],
    blocks: Sequence,
    statistic: Callable[..., np.ndarray],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> Interval:
    """Percentile interval of ``statistic(*columns, scores, positions)`` under a bootstrap
    whose unit is the cluster (a tokenizer and all its cells): clusters are resampled with
    replacement within their block (``scipy.stats.bootstrap`` with one sample per block,
    ``paired=False``, generator ``default_rng(seed)``), each drawn cluster brings its cells
    whole, and each drawn cell's replicates (its seeds' scores) are resampled with
    replacement and averaged into its score.

    ``columns`` hold one value per cell, ``replicates[i]`` the scores of cell ``i``'s seeds;
    ``clusters[u]`` lists cluster ``u``'s cells, in the same order (of strata, say) as every
    other cluster of its block, so that the clusters of a block are interchangeable.
    ``statistic`` receives the drawn cells' columns and scores as ``(..., m)`` arrays and
    ``positions``, the ``(m,)`` cells of the original data whose place each drawn cell
    takes (its stratum is theirs). A block of one cluster is always drawn as it is; with no
    block of two or more clusters nothing can be resampled and the interval is NaN.
    """
    codes = np.unique(np.asarray(blocks, dtype=str), return_inverse=True)[1]
    layouts = []
    for code in range(codes.max() + 1):
        members = [np.asarray(clusters[u], dtype=int) for u in np.flatnonzero(codes == code)]
        if len({len(cells) for cells in members}) > 1:
            raise ValueError("the clusters of a block must have the same number of cells")
        layouts.append(np.stack(members))
    drawn = [layout for layout in layouts if len(layout) > 1]
    kept = [layout.ravel() for layout in layouts if len(layout) == 1]
    if not drawn:
        return Interval(np.nan, np.nan, np.full(n_resamples, np.nan), n_resamples)
    positions = np.concatenate([np.tile(layout[0], len(layout)) for layout in drawn] + kept)
    fixed = [np.asarray(column, dtype=float) for column in columns]
    scores_of = _seed_means(replicates, seed)

    def resampled(*slots: np.ndarray, axis: int = -1) -> np.ndarray:
        parts = [
            layout[np.asarray(slot, dtype=int)].reshape(*np.shape(slot)[:-1], -1)
            for layout, slot in zip(drawn, slots, strict=True)
        ]
        batch = parts[0].shape[:-1]
        parts += [np.broadcast_to(cells, (*batch, len(cells))) for cells in kept]
        cells = np.concatenate(parts, axis=-1)
        return statistic(*(column[cells] for column in fixed), scores_of(cells), positions)

    return bootstrap_interval(
        tuple(np.arange(len(layout)) for layout in drawn),
        resampled,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        paired=False,
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
