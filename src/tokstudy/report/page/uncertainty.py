"""The answer at the top of the study page: per language, the recommended cell, why, and how
sure the study is, from a bootstrap over held-out lines.

The panel's held-out metrics that are ratios of counts summed over lines (fertility, bytes
per token: :data:`~tokstudy.metrics.compute.LINE_RATIOS`) get a percentile interval
(:func:`~tokstudy.statistics.bootstrap.bootstrap_interval`, ``scipy.stats.bootstrap``)
over the language's held-out lines: every cell is resampled with the same seed, so with
the same lines drawn. The recommended cell is Pareto-optimal on those metrics and the best
on the first of them (fewest tokens per word); a cell whose interval overlaps the
recommended one's on every ranked metric is **indistinguishable** from it: the held-out
text cannot tell them apart. Criteria measured once (cost, premiums, downstream scores)
have no interval and stay in the panel.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tokstudy.metrics.compute import LINE_RATIOS, line_counts
from tokstudy.report.page.recommend import Criterion, pareto
from tokstudy.statistics.bootstrap import bootstrap_interval
from tokstudy.tokenizers.base import Tokenizer

#: bootstrap resamples of each interval
RESAMPLES = 1000
#: level of the intervals
CONFIDENCE = 0.95
#: held-out lines resampled at most (a seeded sample of a longer held-out split)
MAX_LINES = 5000


@dataclass(frozen=True)
class Estimate:
    """A metric's value on the held-out lines and its bootstrap interval."""

    value: float
    low: float
    high: float

    def overlaps(self, other: Estimate) -> bool:
        """Whether the two intervals share a point."""
        return self.low <= other.high and other.low <= self.high

    def text(self) -> str:
        """``2.331 [2.29, 2.37]``."""
        return f"{self.value:.4g} [{self.low:.4g}, {self.high:.4g}]"


def bootstrap_lines(lines: Sequence[str], seed: int, limit: int = MAX_LINES) -> list[str]:
    """The held-out lines the bootstrap resamples: all of them up to ``limit``, else a
    seeded sample of ``limit`` in their order."""
    if len(lines) <= limit:
        return list(lines)
    kept = sorted(random.Random(seed).sample(range(len(lines)), limit))
    return [lines[i] for i in kept]


def _ratio_of_sums(numerator: np.ndarray, denominator: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return numerator.sum(axis=axis) / denominator.sum(axis=axis)


def cell_estimates(
    tokenizer: Tokenizer,
    lines: Sequence[str],
    metrics: Sequence[str],
    *,
    seed: int,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, Estimate]:
    """Each of ``metrics`` (names of :data:`LINE_RATIOS`) of ``tokenizer`` on ``lines``, with
    its percentile interval over resampled lines."""
    counts = line_counts(tokenizer, lines)
    estimates = {}
    for name in metrics:
        numerator, denominator = (counts[count] for count in LINE_RATIOS[name])
        value = float(_ratio_of_sums(numerator, denominator))
        if len(lines) < 2 or math.isnan(value):
            estimates[name] = Estimate(value, math.nan, math.nan)
            continue
        interval = bootstrap_interval(
            [numerator, denominator],
            _ratio_of_sums,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
        )
        estimates[name] = Estimate(value, interval.low, interval.high)
    return estimates


def ranked_criteria(criteria: Sequence[Criterion]) -> list[Criterion]:
    """The panel's criteria the summary ranks on: those with a held-out interval."""
    return [criterion for criterion in criteria if criterion.name in LINE_RATIOS]


def summarize(
    frame: pd.DataFrame,
    criteria: Sequence[Criterion],
    estimates: Mapping[tuple[str, str], Mapping[str, Estimate]],
    lines: int,
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The summary of one language (JSON-able) and ``frame`` (the panel's table) with each
    ranked metric's interval (``<metric>_low``, ``<metric>_high``), ``recommended`` and
    ``indistinguishable``. ``estimates``: by (tokenizer, size), each cell's
    :func:`cell_estimates`; ``lines``: how many held-out lines they resampled."""
    ranked = ranked_criteria(criteria)
    keys = list(zip(frame["tokenizer"], frame["size"].astype(str), strict=True))
    table = frame.copy()
    for criterion in ranked:
        for bound in ("low", "high"):
            table[f"{criterion.name}_{bound}"] = [
                getattr(estimates[key][criterion.name], bound) if key in estimates else np.nan
                for key in keys
            ]
    table["recommended"] = False
    table["indistinguishable"] = False
    method = (
        f"{confidence:.0%} percentile bootstrap intervals over each language's held-out lines "
        f"({resamples} resamples; scipy.stats.bootstrap)"
    )
    summary: dict[str, Any] = {"cell": None, "method": method, "lines": lines}
    placed = [i for i, key in enumerate(keys) if key in estimates]
    if not ranked or not placed:
        summary["why"] = "nothing to rank: the study has no held-out metric with an interval"
        return summary, table
    candidates = pareto(frame.iloc[placed].reset_index(drop=True), ranked)
    optimal = candidates[candidates["pareto"]]
    if optimal.empty:
        summary["why"] = "nothing to rank: no cell has every ranked metric"
        return summary, table
    first = ranked[0]
    best = optimal.sort_values(first.name, ascending=first.better == "lower", kind="stable")
    chosen = (str(best.iloc[0]["tokenizer"]), str(best.iloc[0]["size"]))
    mine = estimates[chosen]
    alike = [
        key
        for key in keys
        if key != chosen
        and key in estimates
        and all(mine[c.name].overlaps(estimates[key][c.name]) for c in ranked)
    ]
    table["recommended"] = [key == chosen for key in keys]
    table["indistinguishable"] = [key in alike for key in keys]
    labels = " and ".join(c.label for c in ranked)
    summary |= {
        "cell": {"tokenizer": chosen[0], "size": chosen[1]},
        "why": (
            f"the {'lowest' if first.better == 'lower' else 'highest'} {first.label} of "
            f"the cells that are Pareto-optimal on {labels}"
        ),
        "metrics": [
            {"name": c.name, "label": c.label, "better": c.better, **vars(mine[c.name])}
            for c in ranked
        ],
        "indistinguishable": [
            {
                "tokenizer": key[0],
                "size": key[1],
                "metrics": {c.name: vars(estimates[key][c.name]) for c in ranked},
            }
            for key in alike
        ],
    }
    return summary, table
