"""Rank correlations, vectorized over resamples (the last axis holds the observations):
Spearman's ρ, partial Spearman given covariates, and Spearman within strata."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats


def pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's r along ``axis`` (``scipy.stats.pearsonr``); NaN for a constant column."""
    with warnings.catch_warnings():  # a constant resample gives NaN, counted by the caller
        warnings.simplefilter("ignore")
        return stats.pearsonr(x, y, axis=axis).statistic


def spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis``: Pearson's r of average ranks (as ``scipy.stats.spearmanr``)."""
    return pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _centered_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(a * b, axis=-1) / np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))


def partial_spearman(x: np.ndarray, y: np.ndarray, covariates: np.ndarray) -> np.ndarray:
    """Partial Spearman of ``x`` and ``y`` given ``covariates``: every variable is ranked
    (average ranks), the ranks of ``x`` and ``y`` are regressed by least squares on an
    intercept and the covariates' ranks, and the residuals are correlated (as
    ``pingouin.partial_corr(method="spearman")``).

    ``x``, ``y``: ``(..., n)``; ``covariates``: ``(..., n, k)``; NaN where a residual is 0
    (up to round-off: ranks that the covariates explain, a constant for one).
    A 0/1 indicator column (a language) may be a covariate: ranking it keeps its span.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    covariates = np.asarray(covariates, dtype=float)
    ranked = stats.rankdata(covariates, axis=-2)
    design = np.concatenate([np.ones((*ranked.shape[:-1], 1)), ranked], axis=-1)
    hat = design @ np.linalg.pinv(design)

    def residual(values: np.ndarray) -> np.ndarray:
        ranks = stats.rankdata(values, axis=-1)
        left = ranks - (hat @ ranks[..., None])[..., 0]
        # ranks the covariates explain (a constant, say) leave only round-off: no residual
        explained = np.sum(left**2, axis=-1) <= 1e-20 * np.sum(ranks**2, axis=-1)
        return np.where(explained[..., None], 0.0, left)

    result = _centered_correlation(residual(x), residual(y))
    return np.where(np.isclose(result, 0, atol=1e-12), 0.0, result)


def within_strata_ranks(values: np.ndarray, strata: Sequence) -> np.ndarray:
    """Average ranks of ``values`` within each stratum, minus the stratum's mean rank."""
    values = np.asarray(values, dtype=float)
    codes = np.unique(np.asarray(strata, dtype=str), return_inverse=True)[1]
    centered = np.zeros_like(values)
    for code in np.unique(codes):
        members = codes == code
        ranks = stats.rankdata(values[..., members], axis=-1)
        centered[..., members] = ranks - ranks.mean(axis=-1, keepdims=True)
    return centered


def within_strata_spearman(x: np.ndarray, y: np.ndarray, strata: Sequence) -> float:
    """Spearman's ρ within strata: ranks taken within each stratum, centered there, and
    correlated over all observations (pooled within-stratum ρ); NaN without variation
    inside any stratum. For one stratum it is Spearman's ρ."""
    return float(
        _centered_correlation(within_strata_ranks(x, strata), within_strata_ranks(y, strata))
    )
