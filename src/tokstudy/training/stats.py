"""Statistics over runs: seed summaries, bootstrap CIs and paired Wilcoxon tests.

All functions take and return tidy ``pandas`` DataFrames (one row per observation).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats


def accuracy(gold: Sequence[Any], pred: Sequence[Any]) -> float:
    """Share of equal positions."""
    gold, pred = np.asarray(gold), np.asarray(pred)
    return float(np.mean(gold == pred)) if len(gold) else float("nan")


def macro_f1(gold: Sequence[Any], pred: Sequence[Any]) -> float:
    """Unweighted mean F1 over the labels occurring in ``gold`` or ``pred``."""
    gold, pred = np.asarray(gold), np.asarray(pred)
    scores = []
    for label in np.union1d(gold, pred):
        tp = np.sum((gold == label) & (pred == label))
        fp = np.sum((gold != label) & (pred == label))
        fn = np.sum((gold == label) & (pred != label))
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")


METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": accuracy,
    "macro_f1": macro_f1,
}


def seed_summary(frame: pd.DataFrame, by: Sequence[str], value: str = "value") -> pd.DataFrame:
    """Mean, sample standard deviation (ddof 1) and count of ``value`` per group."""
    grouped = frame.groupby(list(by), sort=True)[value]
    return grouped.agg(mean="mean", std="std", n="count").reset_index()


def bootstrap_ci(
    gold: Sequence,
    pred: Sequence,
    metric: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``metric`` (``accuracy``/``macro_f1``), resampling items."""
    function = METRICS[metric]
    result = stats.bootstrap(
        (np.asarray(gold), np.asarray(pred)),
        function,
        paired=True,
        vectorized=False,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def bootstrap_table(
    predictions: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str] = ("accuracy", "macro_f1"),
    **kwargs,
) -> pd.DataFrame:
    """Point value and bootstrap CI per group and metric from ``gold``/``pred`` columns."""
    rows = []
    for key, group in predictions.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        gold, pred = group["gold"].to_numpy(), group["pred"].to_numpy()
        for metric in metrics:
            low, high = bootstrap_ci(gold, pred, metric, **kwargs)
            rows.append((*key, metric, METRICS[metric](gold, pred), low, high))
    return pd.DataFrame(rows, columns=[*by, "metric", "value", "ci_low", "ci_high"])


def wilcoxon_table(
    frame: pd.DataFrame,
    *,
    system: str = "tokenizer",
    pair_on: Sequence[str] = ("seed",),
    value: str = "value",
) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every pair of systems over paired observations.

    Observations are paired by the ``pair_on`` columns (e.g. seed, language, task);
    ``median_diff`` is the median of ``a − b``. Pairs with no difference at all get
    p = 1 (the test is undefined there).
    """
    wide = frame.pivot_table(index=list(pair_on), columns=system, values=value, aggfunc="first")
    rows = []
    for a, b in itertools.combinations(sorted(wide.columns), 2):
        paired = wide[[a, b]].dropna()
        diff = (paired[a] - paired[b]).to_numpy()
        if len(diff) == 0 or np.all(diff == 0):
            statistic, pvalue = float("nan"), 1.0
        else:
            test = stats.wilcoxon(paired[a], paired[b])
            statistic, pvalue = float(test.statistic), float(test.pvalue)
        median = float(np.median(diff)) if len(diff) else float("nan")
        rows.append((a, b, len(diff), median, statistic, pvalue))
    return pd.DataFrame(rows, columns=["a", "b", "n", "median_diff", "statistic", "pvalue"])
