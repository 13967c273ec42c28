"""Multiple-comparison adjustment (Holm, ``statsmodels``), paired Wilcoxon tests between
systems (``scipy.stats.wilcoxon``) and seed summaries."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from tokstudy.errors import TokstudyError


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (``statsmodels.stats.multitest.multipletests(method="holm")``);
    NaN p-values stay NaN and do not count as tests."""
    pvalues = np.asarray(pvalues, dtype=float)
    adjusted = np.full_like(pvalues, np.nan)
    tested = ~np.isnan(pvalues)
    if tested.sum() == 1:  # one test: its p (multipletests would cost a garbage collection)
        adjusted[tested] = pvalues[tested]
    elif tested.any():
        adjusted[tested] = multipletests(pvalues[tested], method="holm")[1]
    return adjusted


def seed_summary(frame: pd.DataFrame, by: Sequence[str], value: str = "value") -> pd.DataFrame:
    """Mean, sample standard deviation (ddof 1) and count of ``value`` per group."""
    grouped = frame.groupby(list(by), sort=True)[value]
    return grouped.agg(mean="mean", std="std", n="count").reset_index()


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
    p = 1 (the test is undefined there). An observation given twice (the same system and
    ``pair_on`` values) is refused.
    """
    keys = [*pair_on, system]
    repeated = int(frame.duplicated(keys).sum())
    if repeated:
        raise TokstudyError(
            f"wilcoxon_table: {repeated} row(s) repeat the ({', '.join(keys)}) of an earlier "
            "row; each observation must be given once"
        )
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
