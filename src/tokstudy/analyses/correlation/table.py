"""The size-controlled correlation of every intrinsic metric with every downstream score,
per scope (a language or direction) and pooled over scopes, from a checked cells table
(:mod:`tokstudy.analyses.correlation.cells`); every statistic comes from
:mod:`tokstudy.statistics`.

Per (score, scope): the baseline ρ(log vocabulary size, score). Per (score, metric, scope):
Spearman's ρ and the partial Spearman given log size (and language, pooled), each with a
hierarchical bootstrap interval (cells, then seeds within a cell); Spearman within size
(tokenizers ranked within each size and language) with a stratified permutation p; the
Holm-adjusted p over the metrics tested for the score in that scope (a metric declared
``primary`` before the run is adjusted alone, and listed first); the smallest p the
design can reach. Pooled, over scopes: a mixed model ``score ~ metric + log(size) +
(1 | language)`` on z-scored variables; with a ``family`` column, in every scope, one with
a random intercept per tokenizer family instead, and the same statistics within families
(family held fixed) and across them (on the families' mean cells): see :data:`LEVELS`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tokstudy.analyses.correlation.cells import (
    CELL_KEYS,
    FAMILY,
    intrinsic_columns,
    label_columns,
    score_note,
)
from tokstudy.analyses.correlation.settings import MIN_CELLS, CorrelationSettings
from tokstudy.statistics.bootstrap import Interval, Statistic, hierarchical_interval
from tokstudy.statistics.correlation import (
    partial_spearman,
    spearman,
    within_strata_ranks,
    within_strata_spearman,
)
from tokstudy.statistics.mixed import mixed_coefficient
from tokstudy.statistics.permutation import (
    PermutationResult,
    min_attainable_p,
    stratified_normal_pvalue,
    stratified_permutation_test,
)
from tokstudy.statistics.significance import holm

log = logging.getLogger(__name__)

POOLED = "pooled"
COLUMNS = [
    "score",
    "intrinsic",
    "scope",
    "level",
    "n",
    "seeds",
    "size_spearman",
    "size_low",
    "size_high",
    "spearman",
    "spearman_low",
    "spearman_high",
    "partial_spearman",
    "partial_low",
    "partial_high",
    "within_size_spearman",
    "p_within_size",
    "p_method",
    "permutations",
    "p_adjusted",
    "min_attainable_p",
    "primary",
    "note",
    "score_note",
]
MIXED_COLUMNS = [
    "score",
    "intrinsic",
    "scope",
    "random_effect",
    "n",
    "groups",
    "coefficient",
    "low",
    "high",
    "p",
    "note",
]


#: what a row of the tables compares: tokenizer cells (``cell``); cells of one family
#: against each other (``within_family``: family held fixed, as a stratum and covariate);
#: the families' mean cells against each other (``across_family``)
LEVELS = ("cell", "within_family", "across_family")
#: orderings drawn again for a Monte Carlo p at its floor (no drawn ordering as extreme)
FLOOR_PERMUTATIONS = 1_000_000


def _indicators(labels: pd.Series) -> list[np.ndarray]:
    """One 0/1 column per label value but the first (sorted)."""
    values = sorted(labels.unique())
    return [(labels == value).to_numpy(dtype=float) for value in values[1:]]


@dataclass(frozen=True)
class Scope:
    """The cells of one score in one scope: one row per cell, the seeds' scores apart.
    ``within_family``: the family is held fixed (a stratum of the permutation test and a
    covariate of the partial correlation)."""

    name: str
    cells: pd.DataFrame
    replicates: list[np.ndarray]
    pooled: bool
    within_family: bool = False

    @property
    def log_size(self) -> np.ndarray:
        return np.log(self.cells["vocab_size"].to_numpy(dtype=float))

    @property
    def strata(self) -> list[str]:
        """Vocabulary size (and language, pooled; and family, within families): the units
        permuted within."""
        keys = ["language", "vocab_size", *([FAMILY] if self.within_family else [])]
        return ["|".join(map(str, values)) for values in self.cells[keys].values]

    def covariates(self) -> list[np.ndarray]:
        """Log size, and one indicator per language but the first when pooled (and per
        family but the first, within families)."""
        languages = _indicators(self.cells["language"]) if self.pooled else []
        families = _indicators(self.cells[FAMILY]) if self.within_family else []
        return [self.log_size, *languages, *families]

    @property
    def scores(self) -> np.ndarray:
        return np.array([values.mean() for values in self.replicates])

    def subset(self, keep: np.ndarray) -> Scope:
        """The scope restricted to the cells where ``keep`` is true."""
        replicates = [r for r, kept in zip(self.replicates, keep, strict=True) if kept]
        cells = self.cells[keep].reset_index(drop=True)
        return Scope(self.name, cells, replicates, self.pooled, self.within_family)


def _scope(rows: pd.DataFrame, score: str, name: str, pooled: bool, level: str) -> Scope:
    """The scope's cells at ``level`` (:data:`LEVELS`): across families, each family's
    cell is the mean of its tokenizers' (metrics, and the score of each seed)."""
    scored = rows.dropna(subset=[score])
    if level == "across_family":
        keys = ["language", FAMILY, "vocab_size"]
        per_seed = scored.groupby([*keys, "seed"], sort=True).mean(numeric_only=True)
        scored = per_seed.reset_index().assign(tokenizer=lambda t: t[FAMILY])
    grouped = scored.drop(columns="seed").groupby(CELL_KEYS, sort=True)
    cells = grouped.mean(numeric_only=True).drop(columns=[score]).reset_index()
    if FAMILY in scored:
        cells[FAMILY] = grouped[FAMILY].first().to_numpy()
    replicates = [group[score].to_numpy(dtype=float) for _, group in grouped]
    return Scope(name, cells, replicates, pooled, within_family=level == "within_family")


def scopes(cells: pd.DataFrame, score: str, level: str = "cell") -> list[Scope]:
    """Every scope with the score (sorted), then ``pooled`` when there is more than one."""
    scored = cells.dropna(subset=[score])
    names = sorted(scored["language"].unique())
    found = [
        _scope(scored[scored["language"] == name], score, name, False, level) for name in names
    ]
    if len(names) > 1:
        found.append(_scope(scored, score, POOLED, True, level))
    return found


def _interval(
    scope: Scope,
    columns: list[np.ndarray],
    statistic: Statistic,
    settings: CorrelationSettings,
    seed: int,
) -> Interval:
    """Hierarchical bootstrap interval of ``statistic(*columns, cell scores)``."""
    return hierarchical_interval(
        columns,
        scope.replicates,
        statistic,
        n_resamples=settings.bootstrap_samples,
        confidence=settings.confidence,
        seed=seed,
    )


def _partial(x: np.ndarray, *rest: np.ndarray, axis: int = -1) -> np.ndarray:
    *covariates, y = rest
    return partial_spearman(x, y, np.stack(covariates, axis=-1))


def _size_baseline(scope: Scope, settings: CorrelationSettings) -> dict[str, float]:
    if np.ptp(scope.log_size) == 0:
        return {"size_spearman": np.nan, "size_low": np.nan, "size_high": np.nan}
    interval = _interval(scope, [scope.log_size], spearman, settings, settings.seed)
    return {
        "size_spearman": float(spearman(scope.log_size, scope.scores)),
        "size_low": interval.low,
        "size_high": interval.high,
    }


def _metric_row(scope: Scope, metric: str, settings: CorrelationSettings) -> dict:
    """The statistics of one metric against one score in one scope (cells without the
    metric left out)."""
    scope = scope.subset(scope.cells[metric].notna().to_numpy())
    x = scope.cells[metric].to_numpy(dtype=float)
    y = scope.scores
    row: dict = {"n": len(x), "seeds": min(len(r) for r in scope.replicates), "note": ""}
    if len(x) < MIN_CELLS:
        return row | {"note": f"{len(x)} cells < {MIN_CELLS}: not computed"}
    constant = [name for name, column in (("intrinsic", x), ("score", y)) if np.ptp(column) == 0]
    if constant:
        return row | {"note": f"{' and '.join(constant)} constant over the cells: undefined"}
    notes = []
    covariates = scope.covariates()
    for name, statistic, columns in (
        ("spearman", spearman, [x]),
        ("partial", _partial, [x, *covariates]),
    ):
        interval = _interval(scope, columns, statistic, settings, settings.seed)
        row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
        if interval.degenerate:
            notes.append(f"{interval.degenerate} undefined {name} bootstrap resamples left out")
    row["spearman"] = float(spearman(x, y))
    row["partial_spearman"] = float(_partial(x, *covariates, y))
    strata = scope.strata
    ranked_x, ranked_y = within_strata_ranks(x, strata), within_strata_ranks(y, strata)
    if not ranked_x.any() or not ranked_y.any():
        notes.append("no variation within a size: within-size test undefined")
    else:
        row["within_size_spearman"] = within_strata_spearman(x, y, strata)
        row |= _within_size_test(ranked_x, ranked_y, strata, settings, notes)
    row["note"] = "; ".join(notes)
    return row


def _within_size_test(
    ranked_x: np.ndarray,
    ranked_y: np.ndarray,
    strata: list[str],
    settings: CorrelationSettings,
    notes: list[str],
) -> dict:
    """The within-size p, how it was found, the orderings used and the design's floor.

    A Monte Carlo p at its floor (no drawn ordering as extreme as the data) only bounds the
    p: the test is drawn again with :data:`FLOOR_PERMUTATIONS` orderings, and if that one
    is still at its floor the normal approximation of the same permutation distribution
    estimates it (both noted)."""
    # permuting y within strata permutes its within-stratum ranks: rank once
    norm = np.sqrt(np.sum(ranked_x**2) * np.sum(ranked_y**2))

    def test(permutations: int, seed: int) -> tuple[PermutationResult, float, bool]:
        result = stratified_permutation_test(
            ranked_y,
            strata,
            lambda ranks, axis=-1: ranks @ ranked_x / norm,
            n_resamples=permutations,
            seed=seed,
        )
        floor = min_attainable_p(strata, permutations)
        return result, floor, not result.exact and result.pvalue <= floor * (1 + 1e-9)

    result, floor, at_floor = test(settings.permutations, settings.seed)
    if at_floor and settings.permutations < FLOOR_PERMUTATIONS:
        notes.append(
            f"p at the floor of {result.permutations} orderings: {FLOOR_PERMUTATIONS} drawn"
        )
        result, floor, at_floor = test(FLOOR_PERMUTATIONS, settings.seed + 1)
    row = {
        "p_within_size": result.pvalue,
        "p_method": "exact" if result.exact else "monte_carlo",
        "permutations": result.permutations,  # all orderings (exact) or those drawn
        "min_attainable_p": floor,
    }
    if at_floor:
        notes.append("still at the floor: p from the normal approximation")
        row |= {
            "p_within_size": stratified_normal_pvalue(ranked_x, ranked_y, strata),
            "p_method": "normal",
        }
    return row


def _hypothesis_families(group: list[dict], primary: str) -> list[list[dict]]:
    """The sets of rows Holm adjusts over: the primary metric alone, the others together."""
    first = [row for row in group if row["intrinsic"] == primary]
    rest = [row for row in group if row["intrinsic"] != primary]
    return [part for part in (first, rest) if part]


def correlation_table(
    cells: pd.DataFrame,
    scores: Sequence[str],
    settings: CorrelationSettings,
    level: str = "cell",
) -> pd.DataFrame:
    """One row per (score, intrinsic metric, scope) at ``level`` (:data:`LEVELS`; the
    family levels need a ``family`` column); ``p_adjusted`` is Holm over the metrics tested
    for the score in the scope, except that the ``primary`` metric declared in
    ``settings`` comes first and is adjusted alone (its p stands as it is)."""
    intrinsic = intrinsic_columns(cells, scores)
    labels = label_columns(cells)
    rows = []
    for score in sorted(scores):
        for scope in scopes(cells[[*labels, *intrinsic, score]], score, level):
            baseline = _size_baseline(scope, settings)
            group = []
            for metric in intrinsic:
                result = _metric_row(scope, metric, settings)
                group.append(
                    {
                        "score": score,
                        "intrinsic": metric,
                        "scope": scope.name,
                        "level": level,
                        **baseline,
                        **result,
                    }
                )
            group.sort(key=lambda row: row["intrinsic"] != settings.primary)  # primary first
            for family in _hypothesis_families(group, settings.primary):
                adjusted = holm([row.get("p_within_size", np.nan) for row in family])
                for row, value in zip(family, adjusted, strict=True):
                    row["p_adjusted"] = value
            for row in group:
                row["primary"] = row["intrinsic"] == settings.primary
                row["score_note"] = score_note(score)
            rows += group
            log.info(
                "%s (%s): %d cells, %d metrics", score, scope.name, len(scope.cells), len(group)
            )
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["primary"] = table["primary"].astype(bool)
    table["permutations"] = table["permutations"].astype("Int64")
    return table


def ranking(table: pd.DataFrame) -> pd.DataFrame:
    """Intrinsic metrics ranked per score and scope by Holm-adjusted within-size p
    (ascending), then |partial ρ| (descending). A metric whose partial-ρ interval (oriented
    by the sign of its ρ) overlaps that of the metric ranked just above shares its rank
    (``tied``)."""
    ranked = table.dropna(subset=["p_adjusted"]).assign(
        abs_partial=lambda t: t["partial_spearman"].abs()
    )
    ranked = ranked.sort_values(
        ["score", "scope", "p_adjusted", "abs_partial", "intrinsic"],
        ascending=[True, True, True, False, True],
        kind="stable",
    )
    negative = ranked["partial_spearman"] < 0
    low = ranked["partial_low"].where(~negative, -ranked["partial_high"])
    high = ranked["partial_high"].where(~negative, -ranked["partial_low"])
    ranks, tied = [], []
    previous = None
    for position, (key, lo, hi) in enumerate(
        zip(zip(ranked["score"], ranked["scope"], strict=True), low, high, strict=True)
    ):
        if previous is None or previous[0] != key:
            start = position
            ranks.append(1)
            tied.append(False)
        else:
            overlap = lo <= previous[2] and previous[1] <= hi
            tied.append(bool(overlap))
            ranks.append(ranks[-1] if overlap else position - start + 1)
        previous = (key, lo, hi)
    ranked = ranked.assign(rank=ranks, tied=tied)
    columns = ["score", "scope", "rank", "tied", "intrinsic", "n", "partial_spearman"]
    rest = [
        "partial_low",
        "partial_high",
        "p_within_size",
        "p_adjusted",
        "min_attainable_p",
        "primary",
    ]
    return ranked[[*columns, *rest, "score_note"]].reset_index(drop=True)


def _mixed_rows(scope: Scope, score: str, metric: str, settings: CorrelationSettings) -> list:
    """The mixed models of one metric in one scope: pooled, with a random intercept per
    language; with families, with a random intercept per family (and the language as
    fixed indicators, pooled)."""
    data = pd.DataFrame(
        {
            "outcome": scope.scores,
            "metric": scope.cells[metric].to_numpy(dtype=float),
            "log_size": scope.log_size,
            "language": scope.cells["language"].to_numpy(),
        }
    )
    effects = ["language"] if scope.pooled else []
    if FAMILY in scope.cells:
        data[FAMILY] = scope.cells[FAMILY].to_numpy()
        effects.append(FAMILY)
    data = data.dropna(subset=["metric"])
    rows = []
    for group in effects:
        row = {"score": score, "intrinsic": metric, "scope": scope.name}
        row |= {"random_effect": group, "n": len(data), "groups": data[group].nunique()}
        constant = data["metric"].nunique() < 2 or data["outcome"].nunique() < 2
        if len(data) < MIN_CELLS or constant or row["groups"] < 2:
            rows.append(row | {"note": "too few cells or groups, or a constant metric or score"})
            continue
        # a frame of fixed internal names: a user's column named ``score`` or ``log_size``
        # cannot collide with them
        covariates = ["log_size"] if data["log_size"].nunique() > 1 else []
        fixed = data
        if group == FAMILY and scope.pooled:
            languages = _indicators(data["language"])
            names = [f"language_{i}" for i in range(len(languages))]
            fixed = data.assign(**dict(zip(names, languages, strict=True)))
            covariates += names
        fit = mixed_coefficient(fixed, "outcome", "metric", covariates, group, settings.confidence)
        rows.append(
            row
            | {
                "coefficient": fit.estimate,
                "low": fit.low,
                "high": fit.high,
                "p": fit.pvalue,
                "note": fit.note,
            }
        )
    return rows


def mixed_table(
    cells: pd.DataFrame, scores: Sequence[str], settings: CorrelationSettings
) -> pd.DataFrame:
    """Per score, scope and metric: the standardized coefficient of the metric in
    ``score ~ metric + log(size) + (1 | language)`` over the pooled cell means, and, when
    the cells have families, in ``score ~ metric + log(size) [+ language] + (1 | family)``
    in every scope."""
    intrinsic = intrinsic_columns(cells, scores)
    labels = label_columns(cells)
    rows = []
    for score in sorted(scores):
        for scope in scopes(cells[[*labels, *intrinsic, score]], score):
            for metric in intrinsic:
                rows += _mixed_rows(scope, score, metric, settings)
    return pd.DataFrame(rows, columns=MIXED_COLUMNS)
