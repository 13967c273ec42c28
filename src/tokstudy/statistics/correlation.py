"""Rank correlations, vectorized over resamples (the last axis holds the observations):
Spearman's ρ and Spearman within strata."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats


def spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis`` on the pairs with both values (a NaN leaves its pair
    out): :func:`within_strata_spearman` of one stratum, ``scipy.stats.spearmanr`` of the
    pairs present; NaN without variation."""
    x, y = (
        np.moveaxis(np.asarray(x, dtype=float), axis, -1),
        np.moveaxis(np.asarray(y, dtype=float), axis, -1),
    )
    return within_strata_spearman(x, y, np.zeros(x.shape[-1]))


def _centered_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(a * b, axis=-1) / np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))


def within_strata_ranks(values: np.ndarray, strata: Sequence) -> np.ndarray:
    """Average ranks of ``values`` within each stratum, minus the stratum's mean rank; a
    missing value (NaN) is ranked with nothing and counts 0."""
    values = np.asarray(values, dtype=float)
    codes = np.unique(np.asarray(strata, dtype=str), return_inverse=True)[1]
    centered = np.zeros_like(values)
    for code in np.unique(codes):
        members = codes == code
        ranks = stats.rankdata(values[..., members], axis=-1, nan_policy="omit")
        with warnings.catch_warnings():  # a stratum with nothing present: mean of nothing
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(ranks, axis=-1, keepdims=True)
        centered[..., members] = np.nan_to_num(ranks - mean)
    return centered


def within_strata_spearman(x: np.ndarray, y: np.ndarray, strata: Sequence) -> np.ndarray:
    """Spearman's ρ within strata: ranks taken within each stratum (along the last axis),
    centered there, and correlated over all observations (pooled within-stratum ρ, the
    strata's Spearman ρs weighted by their rank variances); NaN without variation inside
    any stratum. For one stratum it is Spearman's ρ. Only the pairs with both values are
    ranked (a NaN in ``x`` or ``y`` leaves its pair out)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    missing = np.isnan(x) | np.isnan(y)
    if missing.any():
        x, y = np.where(missing, np.nan, x), np.where(missing, np.nan, y)
    return _centered_correlation(within_strata_ranks(x, strata), within_strata_ranks(y, strata))
