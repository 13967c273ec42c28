"""The size-controlled correlation of every intrinsic metric with every downstream score,
per scope (a language or direction) and pooled over scopes, from a checked cells table
(:mod:`tokstudy.analyses.correlation.cells`); every statistic comes from
:mod:`tokstudy.statistics`.

The unit of inference is the tokenizer, not the cell: a tokenizer trained at three sizes
in three languages is one observation measured nine times. Per (score, metric, scope):
Spearman's ρ over cells, and the tested statistic, Spearman within strata (tokenizers
ranked within each vocabulary size, and language pooled, and family within families),
each with a bootstrap interval that resamples tokenizers (each with all its cells), then
seeds within cells; the within-size p permutes tokenizer labels, one permutation applied
in every stratum (:func:`tokstudy.statistics.permutation.unit_permutation_test`); the
Holm-adjusted p over the metrics tested for the score in that scope (a metric declared
``primary`` before the run is adjusted alone, and listed first); the smallest p the design
can reach, and no p where that is above 0.05. Per (score, scope): the baseline
ρ(log vocabulary size, score). A mixed model ``score ~ metric + log(size) [+ language]``
with crossed random intercepts per tokenizer and family. With a ``family`` column the same
statistics within families (tokenizers permuted and resampled within their family) and
across them (on the families' mean cells, families as the units): see :data:`LEVELS`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
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
from tokstudy.analyses.correlation.settings import (
    MIN_CELLS,
    MIN_FAMILY_TOKENIZERS,
    CorrelationSettings,
)
from tokstudy.statistics.bootstrap import Interval, cluster_interval, paired_bootstrap_p
from tokstudy.statistics.correlation import spearman, within_strata_ranks, within_strata_spearman
from tokstudy.statistics.mixed import mixed_coefficient
from tokstudy.statistics.permutation import (
    PermutationResult,
    min_attainable_p,
    stratified_permutation_test,
    unit_permutation_test,
)
from tokstudy.statistics.significance import holm
from tokstudy.statistics.units import Units

log = logging.getLogger(__name__)

POOLED = "pooled"
#: the significance level below which a design must be able to reach for a p to be shown
SIGNIFICANCE = 0.05
COLUMNS = [
    "score",
    "intrinsic",
    "scope",
    "level",
    "n",
    "units",
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
    "p_within_size",
    "p_method",
    "permutations",
    "p_adjusted",
    "min_attainable_p",
    "primary",
    "note",
    "score_note",
]
COMPARISON_COLUMNS = [
    "score",
    "scope",
    "level",
    "primary",
    "other",
    "n",
    "units",
    "primary_rho",
    "other_rho",
    "difference",
    "low",
    "high",
    "p",
    "p_adjusted",
    "note",
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


#: what a row of the tables compares: tokenizers (``cell``: the cells of every tokenizer,
#: tokenizers permuted and resampled across families); tokenizers of one family against
#: each other (``within_family``: family held fixed, as a stratum, and tokenizers permuted
#: and resampled within their family); the families' mean cells against each other
#: (``across_family``: families as the units)
LEVELS = ("cell", "within_family", "across_family")
#: orderings drawn again for a Monte Carlo p at its floor (no drawn ordering as extreme)
FLOOR_PERMUTATIONS = 1_000_000


@dataclass(frozen=True)
class Scope:
    """The cells of one score in one scope: one row per cell, the seeds' scores apart (none
    where every seed's run was left out). ``within_family``: the family is held fixed (a
    stratum) and tokenizers are exchanged only within their family."""

    name: str
    cells: pd.DataFrame
    replicates: list[np.ndarray]
    pooled: bool
    within_family: bool = False

    @property
    def log_size(self) -> np.ndarray:
        return np.log(self.cells["vocab_size"].to_numpy(dtype=float))

    @property
    def strata(self) -> np.ndarray:
        """Vocabulary size (and language, pooled; and family, within families): where
        tokenizers are ranked against each other."""
        keys = ["language", "vocab_size", *([FAMILY] if self.within_family else [])]
        return np.array(["|".join(map(str, values)) for values in self.cells[keys].values])

    @property
    def scores(self) -> np.ndarray:
        """Each cell's mean score over its seeds (NaN for a cell without one)."""
        return np.array([values.mean() if len(values) else np.nan for values in self.replicates])

    def blocks(self) -> dict[str, str]:
        """The block each tokenizer is exchanged within: its family within families, else
        one block for all."""
        if not self.within_family:
            return dict.fromkeys(self.cells["tokenizer"], "all")
        return dict(zip(self.cells["tokenizer"], self.cells[FAMILY], strict=True))

    def units(self) -> Units:
        """The tokenizers (the units of inference), each with its cells in stratum order,
        and the block each is exchanged within (:meth:`blocks`)."""
        return Units.of(self.cells["tokenizer"], self.strata, self.blocks())

    def completed(self) -> Scope:
        """The scope with a cell (no metric, no score) wherever a tokenizer lacks one of
        the strata its block was measured in: every tokenizer of a block then has the
        same strata, so a relabelling or a resample moves a tokenizer with its missing
        cells, and an undertrained run left out at one size does not split its block."""
        strata = pd.Series(self.strata, index=self.cells.index)
        block = self.cells["tokenizer"].map(self.blocks())
        missing = []
        for _, members in self.cells.groupby(block, sort=True):
            layout = members.assign(stratum=strata[members.index]).drop_duplicates("stratum")
            for tokenizer, own in members.groupby("tokenizer", sort=True):
                lacking = layout[~layout["stratum"].isin(strata[own.index])]
                labels = {"tokenizer": tokenizer}
                if FAMILY in own:
                    labels[FAMILY] = own[FAMILY].iloc[0]
                missing.append(lacking[["language", "vocab_size"]].assign(**labels))
        added = pd.concat(missing, ignore_index=True) if missing else self.cells.iloc[:0]
        if added.empty:
            return self
        cells = pd.concat([self.cells, added], ignore_index=True)
        replicates = [*self.replicates, *([np.array([])] * len(added))]
        order = cells.sort_values(CELL_KEYS, kind="stable").index.to_numpy()
        cells = cells.loc[order].reset_index(drop=True)[self.cells.columns]
        return Scope(
            self.name, cells, [replicates[i] for i in order], self.pooled, self.within_family
        )

    def subset(self, keep: np.ndarray) -> Scope:
        """The scope restricted to the cells where ``keep`` is true."""
        replicates = [r for r, kept in zip(self.replicates, keep, strict=True) if kept]
        cells = self.cells[keep].reset_index(drop=True)
        return Scope(self.name, cells, replicates, self.pooled, self.within_family)

    def paired(self, *columns: str) -> tuple[Scope, list[np.ndarray], np.ndarray]:
        """The scope's tokenizers with a cell where ``columns`` and the score are all
        present (each with all its cells), those columns (NaN in a cell missing any of
        them), and which cells have them all and a score."""
        measured = np.logical_and.reduce([self.cells[c].notna().to_numpy() for c in columns])
        present = measured & ~np.isnan(self.scores)
        keep = self.cells["tokenizer"].isin(set(self.cells.loc[present, "tokenizer"]))
        keep = keep.to_numpy()
        scope = self.subset(keep)
        values = [
            np.where(measured[keep], scope.cells[column].to_numpy(dtype=float), np.nan)
            for column in columns
        ]
        return scope, values, present[keep]


def _scope(
    rows: pd.DataFrame, score: str, name: str, pooled: bool, level: str
) -> tuple[Scope, list[str]]:
    """The scope's cells at ``level`` (:data:`LEVELS`), completed (:meth:`Scope.completed`),
    and what was left out: tokenizers without a score in the scope; across families, each
    family's cell is the mean of its tokenizers' (metrics, and the score of each seed);
    within families, families of fewer than :data:`MIN_FAMILY_TOKENIZERS` scored
    tokenizers are left out. A cell whose runs were all left out (flagged) keeps its
    metrics and has no score."""
    rows = rows[rows["tokenizer"].isin(set(rows.loc[rows[score].notna(), "tokenizer"]))]
    notes = []
    if level == "across_family":
        keys = ["language", FAMILY, "vocab_size"]
        per_seed = rows.groupby([*keys, "seed"], sort=True).mean(numeric_only=True)
        rows = per_seed.reset_index().assign(tokenizer=lambda t: t[FAMILY])
    if level == "within_family":
        sizes = rows.groupby(FAMILY)["tokenizer"].nunique()
        small = sorted(sizes[sizes < MIN_FAMILY_TOKENIZERS].index)
        if small:
            notes.append(
                f"families of fewer than {MIN_FAMILY_TOKENIZERS} tokenizers left out: "
                + ", ".join(f"{family} ({sizes[family]})" for family in small)
            )
            rows = rows[~rows[FAMILY].isin(small)]
    grouped = rows.drop(columns="seed").groupby(CELL_KEYS, sort=True)
    cells = grouped.mean(numeric_only=True).drop(columns=[score]).reset_index()
    if FAMILY in rows:
        cells[FAMILY] = grouped[FAMILY].first().to_numpy()
    replicates = [group[score].dropna().to_numpy(dtype=float) for _, group in grouped]
    scope = Scope(name, cells, replicates, pooled, within_family=level == "within_family")
    return scope.completed(), notes


def scopes(
    cells: pd.DataFrame, score: str, level: str = "cell", pooled_only: bool = False
) -> list[tuple[Scope, list[str]]]:
    """Every scope with the score (sorted), then ``pooled`` when there is more than one
    (``pooled_only``: that one alone, or the only language's), each with the notes on what
    its level left out."""
    names = sorted(cells.loc[cells[score].notna(), "language"].unique())
    found = [
        _scope(cells[cells["language"] == name], score, name, False, level)
        for name in ([] if pooled_only and len(names) > 1 else names)
    ]
    if len(names) > 1:
        found.append(_scope(cells[cells["language"].isin(names)], score, POOLED, True, level))
    return found


def _interval(
    scope: Scope,
    units: Units,
    column: np.ndarray,
    statistic: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    settings: CorrelationSettings,
) -> Interval:
    """Bootstrap interval of ``statistic(x, scores, positions)`` resampling tokenizers
    within their blocks, each with all its cells, then seeds within cells."""
    return cluster_interval(
        [column],
        scope.replicates,
        units.clusters,
        units.blocks,
        statistic,
        n_resamples=settings.bootstrap_samples,
        confidence=settings.confidence,
        seed=settings.seed,
    )


def _over_cells(x: np.ndarray, y: np.ndarray, positions: np.ndarray | None) -> np.ndarray:
    return spearman(x, y)


def _within(strata: np.ndarray) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Spearman within the strata of the drawn cells' places."""
    return lambda x, y, positions: within_strata_spearman(x, y, strata[positions])


def _size_baseline(scope: Scope, units: Units, settings: CorrelationSettings) -> dict:
    if np.ptp(scope.log_size) == 0:
        return {"size_spearman": np.nan, "size_low": np.nan, "size_high": np.nan}
    interval = _interval(scope, units, scope.log_size, _over_cells, settings)
    return {
        "size_spearman": float(_over_cells(scope.log_size, scope.scores, None)),
        "size_low": interval.low,
        "size_high": interval.high,
    }


def _metric_row(scope: Scope, metric: str, settings: CorrelationSettings) -> dict:
    """The statistics of one metric against one score in one scope, on the cells with both
    (tokenizers without such a cell left out)."""
    scope, (x,), present = scope.paired(metric)
    y = scope.scores
    units = scope.units()
    row: dict = {
        "n": int(present.sum()),
        "units": units.informative(),
        "seeds": min(
            (len(r) for r, kept in zip(scope.replicates, present, strict=True) if kept), default=0
        ),
    }
    if row["n"] < MIN_CELLS:
        return row | {"note": f"{row['n']} cells < {MIN_CELLS}: not computed"}
    constant = [
        name for name, column in (("intrinsic", x), ("score", y)) if np.ptp(column[present]) == 0
    ]
    if constant:
        return row | {"note": f"{' and '.join(constant)} constant over the cells: undefined"}
    notes = []
    strata = scope.strata
    for name, statistic, value in (
        ("spearman", _over_cells, _over_cells(x, y, None)),
        ("partial", _within(strata), within_strata_spearman(x, y, strata)),
    ):
        interval = _interval(scope, units, x, statistic, settings)
        row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
        row["spearman" if name == "spearman" else "partial_spearman"] = float(value)
        if interval.degenerate:
            notes.append(f"{interval.degenerate} undefined {name} bootstrap resamples left out")
    if np.isnan(row["partial_spearman"]):
        notes.append("no variation within a size: within-size test undefined")
    else:
        row |= _within_size_test(x, y, strata, units, settings, notes)
    row["note"] = "; ".join(notes)
    return row


def _unit_sums(
    ranked_x: np.ndarray, ranked_y: np.ndarray, strata: np.ndarray, units: Units
) -> np.ndarray:
    """``sums[u, v]``: tokenizer ``u``'s within-strata ranks of the metric times tokenizer
    ``v``'s of the score, summed over the strata."""
    codes = np.unique(strata, return_inverse=True)[1]
    by_stratum = np.zeros((2, len(units.clusters), codes.max() + 1))
    for unit, cells in enumerate(units.clusters):
        by_stratum[0, unit, codes[cells]] = ranked_x[cells]
        by_stratum[1, unit, codes[cells]] = ranked_y[cells]
    return by_stratum[0] @ by_stratum[1].T


def unit_products(
    ranked_x: np.ndarray, ranked_y: np.ndarray, strata: np.ndarray, units: Units
) -> np.ndarray:
    """``products[u, v]``: the within-strata ranks of tokenizer ``u``'s metric times those of
    tokenizer ``v``'s score, summed over the strata, over the norm of the ranks: the
    within-strata Spearman is the trace, and a permutation π of tokenizers gives
    ``Σ_u products[u, π(u)]``."""
    norm = np.sqrt(np.sum(ranked_x**2) * np.sum(ranked_y**2))
    return _unit_sums(ranked_x, ranked_y, strata, units) / norm


def relabelling_test(
    x: np.ndarray, y: np.ndarray, strata: np.ndarray, units: Units, *, n_resamples: int, seed: int
) -> PermutationResult:
    """Two-sided p of ρ within strata when the tokenizers' scores are relabelled within
    their blocks (the same relabelling in every stratum), a missing value (NaN) moving
    with its tokenizer and the ranks taken again on the pairs present each time. Without
    a missing value it is :func:`unit_permutation_test` of :func:`unit_products`; with
    one, the strata with nothing missing are summed that way too (a relabelling moves
    their ranks), and only the others are ranked again."""
    missing = np.isnan(x) | np.isnan(y)
    if not missing.any():
        ranked_x, ranked_y = within_strata_ranks(x, strata), within_strata_ranks(y, strata)
        products = unit_products(ranked_x, ranked_y, strata, units)
        return unit_permutation_test(products, units.blocks, n_resamples=n_resamples, seed=seed)
    gapped = np.isin(strata, strata[missing])
    # a stratum with a gap set to 0 ranks to 0: it is added apart, ranked again each time
    ranked_x = within_strata_ranks(np.where(gapped, 0.0, x), strata)
    ranked_y = within_strata_ranks(np.where(gapped, 0.0, y), strata)
    whole = _unit_sums(ranked_x, ranked_y, strata, units)
    squares = np.sum(ranked_x**2), np.sum(ranked_y**2)
    tokenizers = np.arange(len(units.clusters))
    gapped_x, gapped_strata = x[gapped], strata[gapped]

    def statistic(orders: np.ndarray, axis: int = -1) -> np.ndarray:
        orders = np.asarray(orders, dtype=int)
        moved = units.relabelled(y, orders)[..., gapped]
        absent = np.isnan(moved) | np.isnan(gapped_x)
        a = within_strata_ranks(np.where(absent, np.nan, gapped_x), gapped_strata)
        b = within_strata_ranks(np.where(absent, np.nan, moved), gapped_strata)
        numerator = whole[tokenizers, orders].sum(axis=-1) + np.sum(a * b, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return numerator / np.sqrt(
                (squares[0] + np.sum(a * a, axis=-1)) * (squares[1] + np.sum(b * b, axis=-1))
            )

    return stratified_permutation_test(
        tokenizers.astype(float), units.blocks, statistic, n_resamples=n_resamples, seed=seed
    )


def _within_size_test(
    x: np.ndarray,
    y: np.ndarray,
    strata: np.ndarray,
    units: Units,
    settings: CorrelationSettings,
    notes: list[str],
) -> dict:
    """The within-size p (tokenizer labels permuted within their blocks, one permutation
    in every stratum: :func:`relabelling_test`), how it was found, the orderings used and
    the design's floor; no p where the floor is above :data:`SIGNIFICANCE`.

    A Monte Carlo p at its floor (no drawn ordering as extreme as the data) is drawn again
    with :data:`FLOOR_PERMUTATIONS` orderings (noted); if none of those is as extreme
    either, the p is that test's floor, ``2 / (FLOOR_PERMUTATIONS + 1)``: still a valid p
    (Phipson and Smyth 2010), noted as the floor."""

    def test(permutations: int, seed: int) -> tuple[PermutationResult, float, bool]:
        result = relabelling_test(x, y, strata, units, n_resamples=permutations, seed=seed)
        floor = min_attainable_p(units.blocks, permutations)
        return result, floor, not result.exact and result.pvalue <= floor * (1 + 1e-9)

    floor = min_attainable_p(units.blocks, settings.permutations)
    if floor > SIGNIFICANCE:
        notes.append(
            f"{units.informative()} exchangeable tokenizers: the smallest attainable p is "
            f"{floor:.3g} > {SIGNIFICANCE}, no p"
        )
        return {"min_attainable_p": floor}
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
        notes.append(f"no drawn ordering as extreme: p is the floor of {result.permutations}")
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
    pooled_only: bool = False,
) -> pd.DataFrame:
    """One row per (score, intrinsic metric, scope) at ``level`` (:data:`LEVELS`; the
    family levels need a ``family`` column; ``pooled_only``: the pooled scope alone, or the
    only language's);
    ``p_adjusted`` is Holm over the metrics tested for the score in the scope, except that
    the ``primary`` metric declared in ``settings`` comes first and is adjusted alone (its
    p stands as it is)."""
    intrinsic = intrinsic_columns(cells, scores)
    labels = label_columns(cells)
    rows = []
    for score in sorted(scores):
        selected = cells[[*labels, *intrinsic, score]]
        for scope, left_out in scopes(selected, score, level, pooled_only):
            if scope.cells.empty:
                log.info("%s (%s), %s: no cells left", score, scope.name, level)
                continue
            baseline = _size_baseline(scope, scope.units(), settings)
            group = []
            for metric in intrinsic:
                result = _metric_row(scope, metric, settings)
                result["note"] = "; ".join(filter(None, [*left_out, result["note"]]))
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


def _strength(strata: np.ndarray, primary_sign: float, other_sign: float) -> Callable:
    """The primary's ρ within size minus the other metric's, each oriented by the sign of
    its own estimate: how much stronger the primary's association is."""

    def difference(primary, other, y, positions):
        places = strata[positions]
        return primary_sign * within_strata_spearman(
            primary, y, places
        ) - other_sign * within_strata_spearman(other, y, places)

    return difference


def _comparison_row(scope: Scope, primary: str, other: str, settings) -> dict:
    """The primary metric against one other in one scope, on the cells that have both and
    a score."""
    scope, (x_primary, x_other), present = scope.paired(primary, other)
    units = scope.units()
    row = {"n": int(present.sum()), "units": units.informative()}
    if row["n"] < MIN_CELLS:
        return row | {"note": f"{row['n']} cells < {MIN_CELLS}: not computed"}
    strata, y = scope.strata, scope.scores
    rho_primary = float(within_strata_spearman(x_primary, y, strata))
    rho_other = float(within_strata_spearman(x_other, y, strata))
    if np.isnan(rho_primary) or np.isnan(rho_other):
        return row | {"note": "no variation within a size: undefined"}
    signs = np.sign(rho_primary) or 1.0, np.sign(rho_other) or 1.0
    interval = cluster_interval(
        [x_primary, x_other],
        scope.replicates,
        units.clusters,
        units.blocks,
        _strength(strata, *signs),
        n_resamples=settings.bootstrap_samples,
        confidence=settings.confidence,
        seed=settings.seed,
    )
    defined = interval.distribution[~np.isnan(interval.distribution)]
    return row | {
        "primary_rho": rho_primary,
        "other_rho": rho_other,
        "difference": signs[0] * rho_primary - signs[1] * rho_other,
        "low": interval.low,
        "high": interval.high,
        "p": paired_bootstrap_p(defined) if len(defined) else np.nan,
        "note": f"{interval.degenerate} undefined resamples left out"
        if interval.degenerate
        else "",
    }


def comparison_table(
    cells: pd.DataFrame, scores: Sequence[str], settings: CorrelationSettings, level: str = "cell"
) -> pd.DataFrame:
    """Is the declared primary metric a better predictor than each other metric? Per score
    and scope at ``level``: the difference of their associations (ρ within size, each
    oriented by its own sign: ``|ρ_primary| - |ρ_other|`` as estimated) with an interval
    from the same tokenizer resamples for both and a two-sided bootstrap p that it is 0,
    Holm-adjusted over the other metrics. Empty without a primary metric."""
    intrinsic = intrinsic_columns(cells, scores)
    primary = settings.primary
    if not primary or primary not in intrinsic:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    labels = label_columns(cells)
    rows = []
    for score in sorted(scores):
        for scope, left_out in scopes(cells[[*labels, *intrinsic, score]], score, level):
            if scope.cells.empty:
                continue
            group = [
                {"score": score, "scope": scope.name, "level": level, "primary": primary}
                | {"other": other}
                | _comparison_row(scope, primary, other, settings)
                for other in intrinsic
                if other != primary
            ]
            adjusted = holm([row.get("p", np.nan) for row in group])
            for row, value in zip(group, adjusted, strict=True):
                row["p_adjusted"] = value
                row["note"] = "; ".join(filter(None, [*left_out, row["note"]]))
            rows += group
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def ranking(table: pd.DataFrame) -> pd.DataFrame:
    """Intrinsic metrics ranked per score and scope by Holm-adjusted within-size p
    (ascending), then |ρ within size| (descending). A metric whose interval of ρ within
    size (oriented by the sign of its ρ) overlaps that of the metric ranked just above
    shares its rank (``tied``)."""
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
    columns = ["score", "scope", "rank", "tied", "intrinsic", "n", "units", "partial_spearman"]
    rest = [
        "partial_low",
        "partial_high",
        "p_within_size",
        "p_adjusted",
        "min_attainable_p",
        "primary",
    ]
    return ranked[[*columns, *rest, "score_note"]].reset_index(drop=True)


def _mixed_row(scope: Scope, score: str, metric: str, settings: CorrelationSettings) -> dict:
    """The mixed model of one metric in one scope: ``score ~ metric + log(size)`` (and the
    language as fixed indicators, pooled) with crossed random intercepts per tokenizer and,
    with families, per family: the tokenizer's lasting level is not counted as evidence
    again in each of its cells."""
    data = pd.DataFrame(
        {
            "outcome": scope.scores,
            "metric": scope.cells[metric].to_numpy(dtype=float),
            "log_size": scope.log_size,
            "language": scope.cells["language"].to_numpy(),
            "tokenizer": scope.cells["tokenizer"].to_numpy(),
        }
    )
    effects = ["tokenizer"]
    if FAMILY in scope.cells:
        data[FAMILY] = scope.cells[FAMILY].to_numpy()
        effects.append(FAMILY)
    data = data.dropna(subset=["metric", "outcome"])
    row = {"score": score, "intrinsic": metric, "scope": scope.name}
    row |= {"random_effect": " + ".join(effects), "n": len(data)}
    row["groups"] = data["tokenizer"].nunique()
    constant = data["metric"].nunique() < 2 or data["outcome"].nunique() < 2
    if len(data) < MIN_CELLS or constant or row["groups"] < 3:
        return row | {"note": "not fitted: fewer than 3 tokenizers, too few cells, or a constant"}
    # a frame of fixed internal names: a user's column named ``score`` or ``log_size``
    # cannot collide with them
    covariates = ["log_size"] if data["log_size"].nunique() > 1 else []
    if scope.pooled:
        languages = _indicators(data["language"])
        names = [f"language_{i}" for i in range(len(languages))]
        data = data.assign(**dict(zip(names, languages, strict=True)))
        covariates += names
    fit = mixed_coefficient(data, "outcome", "metric", covariates, effects, settings.confidence)
    return row | {
        "coefficient": fit.estimate,
        "low": fit.low,
        "high": fit.high,
        "p": fit.pvalue,
        "note": fit.note,
    }


def _indicators(labels: pd.Series) -> list[np.ndarray]:
    """One 0/1 column per label value but the first (sorted)."""
    values = sorted(labels.unique())
    return [(labels == value).to_numpy(dtype=float) for value in values[1:]]


def mixed_table(
    cells: pd.DataFrame, scores: Sequence[str], settings: CorrelationSettings
) -> pd.DataFrame:
    """Per score, scope and metric: the standardized coefficient of the metric in
    ``score ~ metric + log(size) [+ language] + (1 | tokenizer) [+ (1 | family)]`` over
    the cell means, the random intercepts crossed."""
    intrinsic = intrinsic_columns(cells, scores)
    labels = label_columns(cells)
    rows = []
    for score in sorted(scores):
        for scope, _ in scopes(cells[[*labels, *intrinsic, score]], score):
            rows += [_mixed_row(scope, score, metric, settings) for metric in intrinsic]
    return pd.DataFrame(rows, columns=MIXED_COLUMNS)
