"""The statistics package against independent oracles: scipy's bootstrap and permutation
test with the same generator, brute-force enumeration, hand computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from conftest import cell_interval
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tokstudy.statistics.bootstrap import (
    bootstrap_interval,
    cluster_interval,
    paired_bootstrap_p,
)
from tokstudy.statistics.correlation import (
    spearman,
    within_strata_ranks,
    within_strata_spearman,
)
from tokstudy.statistics.mixed import mixed_coefficient
from tokstudy.statistics.permutation import (
    arrangements,
    min_attainable_p,
    stratified_permutation_test,
    unit_permutation_test,
)
from tokstudy.statistics.significance import holm
from tokstudy.statistics.units import Units


def _data(n: int = 14, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, x + rng.normal(size=n)


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_bootstrap_interval_is_scipys_with_the_same_generator(confidence: float) -> None:
    x, y = _data()
    interval = bootstrap_interval((x, y), spearman, n_resamples=300, confidence=confidence, seed=5)
    reference = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: (
            stats.spearmanr(a, b, axis=axis).statistic
            if np.ndim(a) == 1
            else np.array([stats.spearmanr(r, s).statistic for r, s in zip(a, b, strict=True)])
        ),
        paired=True,
        n_resamples=300,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high))
    assert interval.degenerate == 0 and len(interval.distribution) == 300


def test_a_90_percent_interval_is_not_a_95_percent_one() -> None:
    x, y = _data()
    wide = bootstrap_interval((x, y), spearman, n_resamples=300, confidence=0.95, seed=5)
    narrow = bootstrap_interval((x, y), spearman, n_resamples=300, confidence=0.9, seed=5)
    assert (wide.low, wide.high) == pytest.approx(
        tuple(np.percentile(wide.distribution, [2.5, 97.5]))
    )
    assert wide.low < narrow.low and narrow.high < wide.high


def test_hierarchical_bootstrap_with_one_seed_per_cell_is_the_plain_bootstrap() -> None:
    x, y = _data()
    interval = cell_interval(
        [x], [np.array([v]) for v in y], spearman, n_resamples=200, confidence=0.95, seed=2
    )
    reference = stats.bootstrap(
        (x, y),
        spearman,
        paired=True,
        n_resamples=200,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high))


@pytest.mark.parametrize("seeds", [[1, 2, 3, 2, 3, 1], [2, 1, 2, 2, 1, 2]])
def test_hierarchical_bootstrap_resamples_seeds_within_the_drawn_cells(seeds: list[int]) -> None:
    # oracle: the two-level resampling written as loops, with the documented generators
    rng = np.random.default_rng(4)
    x = rng.normal(size=6)
    replicates = [rng.normal(v, 1.0, size=k) for v, k in zip(x, seeds, strict=True)]
    interval = cell_interval([x], replicates, spearman, n_resamples=50, confidence=0.9, seed=8)
    outer = np.random.default_rng(8).integers(0, 6, (50, 6))
    inner = np.random.default_rng([8, 1]).random((50, 6, max(seeds)))
    values = []
    for b, cells in enumerate(outer):
        means = []
        for j, cell in enumerate(cells):
            seeds = replicates[cell]
            picks = [seeds[int(u * len(seeds))] for u in inner[b, j, : len(seeds)]]
            means.append(np.mean(picks))
        values.append(stats.spearmanr(x[cells], means).statistic)
    assert (interval.low, interval.high) == pytest.approx(tuple(np.nanpercentile(values, [5, 95])))
    # the seed spread widens the interval compared with the seed means alone
    means_only = cell_interval(
        [x],
        [np.array([r.mean()]) for r in replicates],
        spearman,
        n_resamples=50,
        confidence=0.9,
        seed=8,
    )
    assert not np.allclose(interval.distribution, means_only.distribution)


def test_paired_bootstrap_p_by_hand() -> None:
    # 5 differences: 1 ≤ 0 and 4 ≥ 0 → tails (1+1)/6 and (4+1)/6 → p = 2 · 2/6
    assert paired_bootstrap_p(np.array([-1.0, 1, 2, 3, 4])) == pytest.approx(4 / 6)
    assert paired_bootstrap_p(np.zeros(10)) == 1.0
    assert paired_bootstrap_p(np.ones(99)) == pytest.approx(2 / 100)
    # mostly worse: 4 ≤ 0 and 1 ≥ 0 → tails 5/6 and 2/6 → p = 2 · 2/6
    assert paired_bootstrap_p(np.array([-1.0, -2, -3, -4, 1])) == pytest.approx(4 / 6)


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1 → 0.04, 0.09, 0.08→0.09 (monotone), 0.5
    adjusted = holm([0.04, 0.01, 0.5, 0.03, np.nan])
    assert adjusted[:4] == pytest.approx([0.09, 0.04, 0.5, 0.09])
    assert math.isnan(adjusted[4])
    assert holm([0.3, 0.6]) == pytest.approx([0.6, 0.6])


def test_within_size_spearman_ignores_what_only_size_moves() -> None:
    size = np.repeat([1000.0, 2000, 4000], 4)
    metric = np.log(size) * 3 + np.tile([0.1, 0.3, 0.2, 0.4], 3)
    score = np.log(size) + np.tile([0.2, 0.1, 0.4, 0.3], 3)
    assert spearman(metric, score) > 0.8
    # within size, the metric orders the cells 1,3,2,4 and the score 2,1,4,3
    ranks = np.array([1, 3, 2, 4.0]) - 2.5, np.array([2, 1, 4, 3.0]) - 2.5
    expected = float(ranks[0] @ ranks[1] / (ranks[0] @ ranks[0]))
    assert within_strata_spearman(metric, score, size) == pytest.approx(expected)


def test_within_strata_spearman_of_one_stratum_is_spearman() -> None:
    x, y = _data(9)
    assert within_strata_spearman(x, y, ["a"] * 9) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert within_strata_ranks([3.0, 1, 2, 5, 5], ["a", "a", "a", "b", "b"]) == pytest.approx(
        [1, -1, 0, 0, 0]
    )


def test_within_strata_spearman_leaves_out_the_pairs_with_a_missing_value() -> None:
    # oracle: the same statistic on the present pairs only, and for one stratum scipy's
    # Spearman of the pairs present; a batch row with its own missing pairs is its own
    x, y = _data(12)
    strata = ["a"] * 6 + ["b"] * 6
    y_missing = y.copy()
    y_missing[[1, 8]] = np.nan
    present = ~np.isnan(y_missing)
    expected = within_strata_spearman(x[present], y[present], np.array(strata)[present])
    assert within_strata_spearman(x, y_missing, strata) == pytest.approx(expected)
    x_missing = x.copy()
    x_missing[2] = np.nan
    one = ~np.isnan(x_missing[:6]) & ~np.isnan(y_missing[:6])
    assert within_strata_spearman(x_missing[:6], y_missing[:6], ["a"] * 6) == pytest.approx(
        stats.spearmanr(x[:6][one], y[:6][one]).statistic
    )
    assert spearman(x_missing[:6], y_missing[:6]) == pytest.approx(
        stats.spearmanr(x[:6][one], y[:6][one]).statistic
    )
    along_rows = spearman(np.stack([x_missing[:6]] * 2).T, np.stack([y_missing[:6]] * 2).T, 0)
    assert along_rows.tolist() == pytest.approx([stats.spearmanr(x[:6][one], y[:6][one])[0]] * 2)
    batch = within_strata_spearman(np.stack([x, x]), np.stack([y, y_missing]), strata)
    assert batch.tolist() == pytest.approx([within_strata_spearman(x, y, strata), expected])


def _within_statistic(x: np.ndarray, strata: list) -> callable:
    ranked_x = within_strata_ranks(x, strata)

    def statistic(y: np.ndarray, axis: int = -1) -> np.ndarray:
        ranked = within_strata_ranks(y, strata)
        return np.sum(ranked * ranked_x, axis=-1) / np.sqrt(
            np.sum(ranked**2, axis=-1) * np.sum(ranked_x**2)
        )

    return statistic


def test_exact_stratified_p_by_brute_force_enumeration() -> None:
    x = np.array([0.3, 0.1, 0.9, 2.0, 1.1, 5.0])
    y = np.array([1.0, 0.5, 2.0, 3.0, 4.0, 0.0])
    strata = ["s", "s", "s", "t", "t", "t"]
    statistic = _within_statistic(x, strata)
    result = stratified_permutation_test(y, strata, statistic, n_resamples=36, seed=0)
    assert result.exact and result.permutations == 36 == arrangements(strata)
    # brute force: every permutation of the 6 values that keeps each value in its stratum
    null = []
    for order in itertools.permutations(range(6)):
        if all(strata[i] == strata[j] for i, j in zip(order, range(6), strict=True)):
            null.append(within_strata_spearman(x, y[list(order)], strata))
    null = np.array(null)
    observed = within_strata_spearman(x, y, strata)
    assert len(null) == 36 and result.statistic == pytest.approx(observed)
    tolerance = 1e-12
    less = np.mean(null <= observed + tolerance)
    greater = np.mean(null >= observed - tolerance)
    assert result.pvalue == pytest.approx(min(1, 2 * min(less, greater)))


@pytest.mark.parametrize("batch", [50_000, 7])  # drawn at once, or in 143 batches
@pytest.mark.parametrize("sign", [1, -1])  # the observed ρ in the upper or the lower tail
def test_monte_carlo_p_of_one_stratum_is_scipys_permutation_test(
    sign: int, batch: int, monkeypatch
) -> None:
    import tokstudy.statistics.permutation as permutation

    monkeypatch.setattr(permutation, "BATCH", batch)
    x, y = _data(9, seed=1)
    y = sign * y
    result = stratified_permutation_test(
        y, ["one"] * 9, _within_statistic(x, ["one"] * 9), n_resamples=999, seed=4
    )
    assert not result.exact and result.permutations == 999
    reference = stats.permutation_test(
        (y,),
        lambda permuted, axis=-1: spearman(x, permuted, axis=axis),
        permutation_type="pairings",
        n_resamples=999,
        vectorized=True,
        rng=np.random.default_rng(4),
    )
    assert result.pvalue == pytest.approx(reference.pvalue)


def test_exact_p_of_one_stratum_is_scipys_exact_test() -> None:
    x, y = _data(5, seed=2)
    result = stratified_permutation_test(
        y, ["one"] * 5, _within_statistic(x, ["one"] * 5), n_resamples=500, seed=0
    )
    reference = stats.permutation_test(
        (y,),
        lambda permuted, axis=-1: spearman(x, permuted, axis=axis),
        permutation_type="pairings",
        n_resamples=500,
        vectorized=True,
    )
    assert result.exact and result.pvalue == pytest.approx(reference.pvalue)


def test_minimum_attainable_p_by_hand() -> None:
    # two-sided exact bound 2/N: 4 cells in one stratum → N = 4! = 24 → 1/12 ≈ 0.083
    assert min_attainable_p(["a"] * 4, 20000) == pytest.approx(2 / 24)
    # 4 tokenizers × 3 sizes → N = 24³ = 13824 orderings
    assert min_attainable_p(np.repeat([1, 2, 3], 4), 20000) == pytest.approx(2 / 13824)
    # more orderings than permutations drawn: the Monte Carlo floor 2/(B + 1)
    assert min_attainable_p(np.repeat([1, 2, 3], 4), 999) == pytest.approx(2 / 1000)
    # one cell per size: nothing to permute
    assert min_attainable_p([1, 2, 3, 4], 100) == 1.0
    # and the exact test reaches it on perfectly concordant cells
    x = np.array([1.0, 2, 3, 4])
    result = stratified_permutation_test(
        x * 2, ["a"] * 4, _within_statistic(x, ["a"] * 4), n_resamples=100, seed=0
    )
    assert result.pvalue == pytest.approx(2 / 24)


def _enumerated_pvalue(null: list[float], observed: float) -> float:
    """scipy's two-sided p over an enumerated null distribution."""
    null = np.array(null)
    less = np.mean(null <= observed + 1e-12)
    greater = np.mean(null >= observed - 1e-12)
    return float(min(1, 2 * min(less, greater)))


def _block_permutations(blocks: list[str]):
    """Every permutation of the units that keeps each unit in its block (brute force)."""
    n = len(blocks)
    for order in itertools.permutations(range(n)):
        if all(blocks[u] == blocks[v] for u, v in zip(range(n), order, strict=True)):
            yield order


def test_unit_permutation_p_by_brute_force_over_block_permutations() -> None:
    rng = np.random.default_rng(9)
    products = rng.normal(size=(6, 6))
    blocks = ["a", "a", "a", "b", "b", "b"]
    null = [
        sum(products[u, v] for u, v in enumerate(order)) for order in _block_permutations(blocks)
    ]
    assert len(null) == 36
    result = unit_permutation_test(products, blocks, n_resamples=100, seed=0)
    assert result.exact and result.permutations == 36
    assert result.statistic == pytest.approx(np.trace(products))
    assert result.pvalue == pytest.approx(_enumerated_pvalue(null, np.trace(products)))
    # fewer orderings allowed than there are: Monte Carlo, with its floor
    drawn = unit_permutation_test(products, blocks, n_resamples=20, seed=0)
    assert not drawn.exact and drawn.permutations == 20 and drawn.pvalue >= 2 / 21


def _clusters(units: int, strata: int) -> list[np.ndarray]:
    """Cluster u's cells: u·strata … u·strata + strata − 1 (one per stratum, in order)."""
    return [np.arange(u * strata, (u + 1) * strata) for u in range(units)]


def test_cluster_bootstrap_draws_whole_tokenizers_within_their_blocks() -> None:
    # 5 tokenizers in blocks a (3) and b (2), 3 strata each; x encodes (tokenizer, stratum)
    clusters = _clusters(5, 3)
    blocks = ["a", "a", "a", "b", "b"]
    x = np.array([10.0 * u + s for u in range(5) for s in range(3)])
    replicates = [np.array([v]) for v in x]
    checks = []

    def statistic(drawn: np.ndarray, scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
        tokenizer, stratum = drawn // 10, drawn % 10
        in_place = np.all(stratum == positions % 3, axis=-1)  # each cell in its stratum
        whole = np.all(
            np.ptp(tokenizer.reshape(*tokenizer.shape[:-1], -1, 3), axis=-1) == 0, axis=-1
        )
        from_a = np.sum(tokenizer < 3, axis=-1)  # cells of block a: always 3 tokenizers' 9
        checks.append((in_place.all(), whole.all(), set(np.unique(from_a))))
        return scores.mean(axis=-1)

    interval = cluster_interval(
        [x], replicates, clusters, blocks, statistic, n_resamples=300, confidence=0.95, seed=1
    )
    assert checks and all(place and whole and counts == {9} for place, whole, counts in checks)
    assert interval.low < interval.high and interval.degenerate == 0


def test_cluster_bootstrap_is_scipys_over_tokenizers_with_their_cells_by_hand() -> None:
    # oracle: scipy's bootstrap over tokenizer indices (same generator), each drawn
    # tokenizer's cells appended by hand and Spearman computed on them by scipy
    rng = np.random.default_rng(3)
    clusters = _clusters(6, 3)
    x, y = rng.normal(size=18), rng.normal(size=18)
    interval = cluster_interval(
        [x],
        [np.array([v]) for v in y],
        clusters,
        ["all"] * 6,
        lambda a, b, positions: spearman(a, b),
        n_resamples=200,
        confidence=0.9,
        seed=7,
    )

    def by_hand(units: np.ndarray) -> float:
        cells = np.concatenate([clusters[int(u)] for u in units])
        return stats.spearmanr(x[cells], y[cells]).statistic

    reference = stats.bootstrap(
        (np.arange(6),),
        by_hand,
        vectorized=False,
        n_resamples=200,
        confidence_level=0.9,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert (interval.low, interval.high) == pytest.approx((reference.low, reference.high))


def test_a_tokenizers_lasting_offset_widens_the_cluster_interval() -> None:
    # 8 tokenizers × 9 cells: each tokenizer's offset is shared by its cells, so resampling
    # cells as if independent understates the spread; resampling tokenizers does not
    rng = np.random.default_rng(0)
    offsets = np.repeat(rng.normal(size=8), 9)
    y = offsets + rng.normal(scale=0.1, size=72)
    replicates = [np.array([v]) for v in y]

    def mean(a: np.ndarray, b: np.ndarray, positions: np.ndarray) -> np.ndarray:
        return b.mean(axis=-1)

    clustered = cluster_interval(
        [y],
        replicates,
        _clusters(8, 9),
        ["all"] * 8,
        mean,
        n_resamples=400,
        confidence=0.95,
        seed=2,
    )
    cells = cell_interval(
        [y], replicates, lambda a, b, axis=-1: b.mean(axis=axis), n_resamples=400,
        confidence=0.95, seed=2,
    )  # fmt: skip
    # oracle: the standard error of a mean of 8 independent tokenizer means
    expected = 2 * 1.96 * np.std(y.reshape(8, 9).mean(axis=1), ddof=1) / np.sqrt(8)
    width = clustered.high - clustered.low
    assert 0.7 * expected < width < 1.2 * expected
    assert cells.high - cells.low < 0.5 * width


def test_singleton_blocks_stay_and_without_a_block_to_resample_the_interval_is_nan() -> None:
    x = np.arange(6.0)
    replicates = [np.array([v]) for v in x]
    seen = []

    def statistic(a: np.ndarray, b: np.ndarray, positions: np.ndarray) -> np.ndarray:
        seen.append(np.all(a[..., -3:] == [3.0, 4.0, 5.0]))  # the singleton's cells, always
        return b.mean(axis=-1)

    clusters = [np.array([0, 1, 2]), np.array([3, 4, 5])]
    lone = cluster_interval(
        [x], replicates, clusters, ["a", "b"], statistic, n_resamples=50, confidence=0.9, seed=0
    )
    assert math.isnan(lone.low) and lone.degenerate == 50 and not seen
    clusters = [np.array([0]), np.array([1]), np.array([2]), np.array([3, 4, 5])]
    mixed = cluster_interval(
        [x], replicates, clusters, ["a", "a", "a", "b"], statistic, n_resamples=50,
        confidence=0.9, seed=0,
    )  # fmt: skip
    assert seen and all(seen) and mixed.low < mixed.high


def test_crossed_random_effects_recover_a_slope_beside_tokenizer_and_family_levels() -> None:
    # oracle: least squares with a fixed intercept per tokenizer (families nest them) on the
    # z-scored variables; REML with large group variances comes close to it
    rng = np.random.default_rng(5)
    tokenizers = np.repeat([f"t{i}" for i in range(8)], 9)
    families = np.repeat(["a", "a", "a", "a", "b", "b", "b", "b"], 9)
    level = dict(zip(sorted(set(tokenizers)), rng.normal(scale=3, size=8), strict=True))
    metric = rng.normal(size=72)
    score = 0.6 * metric + np.array([level[t] for t in tokenizers]) + rng.normal(scale=0.2, size=72)
    frame = pd.DataFrame(
        {"score": score, "metric": metric, "tokenizer": tokenizers, "family": families}
    )
    fit = mixed_coefficient(frame, "score", "metric", [], ["tokenizer", "family"], 0.95)
    z = {c: (frame[c] - frame[c].mean()) / frame[c].std() for c in ("score", "metric")}
    dummies = [(tokenizers == t).astype(float) for t in sorted(set(tokenizers))]
    design = np.column_stack([z["metric"], *dummies])
    expected = np.linalg.lstsq(design, z["score"], rcond=None)[0][0]
    assert fit.estimate == pytest.approx(expected, rel=0.05)
    assert fit.low > 0 and fit.pvalue < 1e-6


def test_mixed_model_coefficient_recovers_a_planted_effect() -> None:
    # oracle: least squares with a fixed intercept per group on the z-scored variables
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b", "c", "d"], 12)
    offsets = dict(zip("abcd", [-2.0, 0.5, 1.0, 3.0], strict=True))
    metric = rng.normal(size=48)
    size = rng.normal(size=48)
    score = 0.7 * metric + 0.3 * size + np.array([offsets[g] for g in groups])
    score = score + rng.normal(scale=0.3, size=48)
    frame = pd.DataFrame({"score": score, "metric": metric, "size": size, "language": groups})
    fit = mixed_coefficient(frame, "score", "metric", ["size"], ["language"], 0.95)
    z = {c: (frame[c] - frame[c].mean()) / frame[c].std() for c in ("score", "metric", "size")}
    design = np.column_stack([z["metric"], z["size"], *(groups == g for g in "abcd")]).astype(float)
    expected = np.linalg.lstsq(design, z["score"], rcond=None)[0][0]
    assert fit.estimate == pytest.approx(expected, rel=0.03)
    assert fit.low < fit.estimate < fit.high and fit.pvalue < 1e-6
    assert fit.high - fit.estimate == pytest.approx(fit.estimate - fit.low)
    assert fit.note == ""


def test_a_mixed_model_statsmodels_gives_up_on_is_a_noted_gap(monkeypatch) -> None:
    import tokstudy.statistics.mixed as mixed

    class Singular:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def fit(self, **kwargs):
            raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(mixed.smf, "mixedlm", Singular)
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {"score": rng.normal(size=8), "metric": rng.normal(size=8), "language": ["a", "b"] * 4}
    )
    fit = mixed_coefficient(frame, "score", "metric", [], ["language"], 0.95)
    assert fit.note == "not fitted: Singular matrix"
    assert all(math.isnan(v) for v in (fit.estimate, fit.low, fit.high, fit.pvalue))


def test_mixed_model_without_a_group_effect_notes_the_variance_boundary() -> None:
    rng = np.random.default_rng(1)
    metric = rng.normal(size=24)
    frame = pd.DataFrame(
        {
            "score": 0.5 * metric + rng.normal(scale=0.5, size=24),
            "metric": metric,
            "language": np.repeat(["a", "b"], 12),
        }
    )
    fit = mixed_coefficient(frame, "score", "metric", [], ["language"], 0.95)
    assert "language variance at its boundary (about 0)" in fit.note


def test_no_more_than_the_exact_limit_is_enumerated(monkeypatch) -> None:
    import tokstudy.statistics.permutation as permutation

    monkeypatch.setattr(permutation, "EXACT_LIMIT", 100)
    x, y = _data(5)
    # 5! = 120 orderings > the limit: Monte Carlo although 500 permutations were allowed
    result = stratified_permutation_test(
        y, ["a"] * 5, _within_statistic(x, ["a"] * 5), n_resamples=500, seed=0
    )
    assert not result.exact and result.permutations == 500
    assert min_attainable_p(["a"] * 5, 500) == pytest.approx(2 / 501)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.floats(-50, 50, allow_nan=False), st.integers(0, 1)),
        min_size=4,
        max_size=12,
    )
)
def test_rank_correlations_agree_with_scipy_on_ties(rows: list[tuple]) -> None:
    x = np.array([a for a, _, _ in rows], dtype=float)
    y = np.array([b for _, b, _ in rows])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    rho = stats.spearmanr(x, y).statistic
    assert float(spearman(x, y)) == pytest.approx(rho, abs=1e-9)
    # within one stratum the within-strata ρ is ρ; with strata it is symmetric and bounded
    assert within_strata_spearman(x, y, ["one"] * len(x)) == pytest.approx(rho, abs=1e-9)
    group = [g for _, _, g in rows]
    within = within_strata_spearman(x, y, group)
    if not math.isnan(within):
        assert within == pytest.approx(within_strata_spearman(y, x, group), abs=1e-12)
        assert -1 - 1e-12 <= within <= 1 + 1e-12


def test_units_group_cells_by_name_in_stratum_order_and_block_by_strata() -> None:
    names = ["b", "a", "b", "a", "c"]
    strata = ["2", "2", "1", "1", "1"]
    units = Units.of(names, strata)
    assert [cells.tolist() for cells in units.clusters] == [[3, 1], [2, 0], [4]]
    assert units.blocks == ["1/2", "1/2", "1"] and units.informative() == 2
    # a and b swapped (cells 3, 1 ↔ 2, 0), c (one cell, its own block) kept
    swapped = units.relabelled(np.array([10.0, 11, 12, 13, 14]), np.array([1, 0, 2]))
    assert swapped.tolist() == [11.0, 10, 13, 12, 14]
    assert Units.of(names[:4], strata[:4], {"a": "x", "b": "x"}).blocks == ["x", "x"]
    with pytest.raises(ValueError, match="the units of block 'x' are not in the same strata"):
        Units.of(names, strata, {"a": "x", "b": "x", "c": "x"})


@given(st.permutations(range(4)), st.permutations(range(4)))
@settings(max_examples=30, deadline=None)
def test_relabelling_moves_each_unit_s_cells_whole(first: list, second: list) -> None:
    # oracle: each unit's cells given by hand, one ordering at a time
    clusters = [np.array([0, 4]), np.array([1, 5]), np.array([2, 6]), np.array([3, 7])]
    units = Units(clusters, ["b"] * 4)
    values = np.array([0.0, 1, 2, np.nan, 10, 11, 12, 13])
    moved = units.relabelled(values, np.array([first, second]))
    for row, order in zip(moved, (first, second), strict=True):
        expected = np.empty(8)
        for unit, source in enumerate(order):
            expected[[unit, unit + 4]] = values[[source, source + 4]]
        np.testing.assert_array_equal(row, expected)
    np.testing.assert_array_equal(units.relabelled(values, np.arange(4)), values)
