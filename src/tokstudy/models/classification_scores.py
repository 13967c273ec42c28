"""Classification scores of a fine-tuned model (accuracy, macro-F1) and their bootstrap
intervals over test items (:func:`tokstudy.statistics.bootstrap.bootstrap_interval`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tokstudy.statistics.bootstrap import bootstrap_interval


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


CLASSIFICATION_METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "accuracy": accuracy,
    "macro_f1": macro_f1,
}

#: a fine-tune whose accuracy is at most this far above the majority class's has collapsed
COLLAPSE_MARGIN = 0.01


def majority_accuracy(gold: Sequence[Any]) -> float:
    """Accuracy of always predicting the most frequent gold label."""
    if not len(gold):
        return float("nan")
    _, counts = np.unique(np.asarray(gold), return_counts=True)
    return float(counts.max() / counts.sum())


def learned_or_not(gold: Sequence[Any], pred: Sequence[Any], n_labels: int) -> dict[str, float]:
    """``majority_accuracy`` of the test set and ``collapsed``: 1.0 when the model's accuracy
    is within :data:`COLLAPSE_MARGIN` of it or its macro-F1 is at most 1 / ``n_labels``
    (a model that predicts one class, or hardly more), else 0.0."""
    majority = majority_accuracy(gold)
    # rounded: 0.61 − 0.60 is 0.010000000000000009 in floating point
    gain = round(accuracy(gold, pred) - majority, 12)
    collapsed = gain <= COLLAPSE_MARGIN or macro_f1(gold, pred) <= 1 / n_labels
    return {"majority_accuracy": majority, "collapsed": float(collapsed)}


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
    interval = bootstrap_interval(
        (np.asarray(gold), np.asarray(pred)),
        CLASSIFICATION_METRICS[metric],
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        vectorized=False,
    )
    return interval.low, interval.high


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
            rows.append((*key, metric, CLASSIFICATION_METRICS[metric](gold, pred), low, high))
    return pd.DataFrame(rows, columns=[*by, "metric", "value", "ci_low", "ci_high"])
