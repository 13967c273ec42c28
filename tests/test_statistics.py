"""The statistics package against independent oracles: scipy's bootstrap and permutation
test with the same generator, brute-force enumeration, hand computations, pingouin."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pingouin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tokstudy.statistics.bootstrap import (
    bootstrap_interval,
    hierarchical_interval,
    paired_bootstrap_p,
)
from tokstudy.statistics.correlation import (
    partial_spearman,
    spearman,
    within_strata_ranks,
    within_strata_spearman,
)
from tokstudy.statistics.mixed import mixed_coefficient
from tokstudy.statistics.permutation import (
    arrangements,
    min_attainable_p,
    stratified_normal_pvalue,
    stratified_permutation_test,
)
from tokstudy.statistics.significance import holm


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
    interval = hierarchical_interval(
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
    interval = hierarchical_interval(
        [x], replicates, spearman, n_resamples=50, confidence=0.9, seed=8
    )
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
    means_only = hierarchical_interval(
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


def _rank_residual_partial(x: np.ndarray, y: np.ndarray, covariates: np.ndarray) -> float:
    design = np.column_stack([np.ones(len(x)), *(stats.rankdata(c) for c in covariates.T)])

    def residual(v: np.ndarray) -> np.ndarray:
        ranks = stats.rankdata(v)
        return ranks - design @ np.linalg.lstsq(design, ranks, rcond=None)[0]

    return float(stats.pearsonr(residual(x), residual(y)).statistic)


def test_partial_spearman_by_rank_residuals_and_pingouin() -> None:
    rng = np.random.default_rng(3)
    size = np.repeat([1000.0, 2000, 4000], 5)
    language = np.tile([0.0, 1, 0, 1, 1], 3)
    x = np.log(size) + rng.normal(size=15)
    y = np.log(size) + 0.5 * x + language + rng.normal(size=15)
    covariates = np.column_stack([np.log(size), language])
    ours = float(partial_spearman(x, y, covariates))
    assert ours == pytest.approx(_rank_residual_partial(x, y, covariates))
    frame = pd.DataFrame({"x": x, "y": y, "size": np.log(size), "language": language})
    reference = pingouin.partial_corr(
        frame, x="x", y="y", covar=["size", "language"], method="spearman"
    )
    assert ours == pytest.approx(float(reference["r"].iloc[0]))
    # vectorized over resamples: each row as computed alone
    batch = np.stack([x, x[::-1]])
    both = partial_spearman(batch, np.stack([y, y]), np.stack([covariates, covariates]))
    assert both[1] == pytest.approx(_rank_residual_partial(x[::-1], y, covariates))


def test_partial_spearman_is_zero_when_only_size_moves_the_score() -> None:
    size = np.repeat([1000.0, 2000, 4000], 4)
    metric = np.log(size) * 3 + np.tile([0.1, 0.3, 0.2, 0.4], 3)
    score = np.log(size) + np.tile([0.2, 0.1, 0.4, 0.3], 3)
    assert spearman(metric, score) > 0.8
    # within size, the metric orders the cells 1,3,2,4 and the score 2,1,4,3
    ranks = np.array([1, 3, 2, 4.0]) - 2.5, np.array([2, 1, 4, 3.0]) - 2.5
    expected = float(ranks[0] @ ranks[1] / (ranks[0] @ ranks[0]))
    assert within_strata_spearman(metric, score, size) == pytest.approx(expected)
    assert float(partial_spearman(metric, score, np.log(size)[:, None])) == pytest.approx(
        _rank_residual_partial(metric, score, np.log(size)[:, None])
    )


def test_within_strata_spearman_of_one_stratum_is_spearman() -> None:
    x, y = _data(9)
    assert within_strata_spearman(x, y, ["a"] * 9) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert within_strata_ranks([3.0, 1, 2, 5, 5], ["a", "a", "a", "b", "b"]) == pytest.approx(
        [1, -1, 0, 0, 0]
    )


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


def test_normal_p_uses_the_moments_of_the_enumerated_permutation_distribution() -> None:
    # oracle: every within-stratum ordering of y enumerated by brute force (3!·4! = 144),
    # the statistic Σ x·y over each, its mean and variance; ties in y included
    x = np.array([0.3, 0.1, 0.9, 2.0, 1.1, 5.0, -1.0])
    y = np.array([1.0, 1.0, 2.0, 3.0, 4.0, 0.0, 4.0])
    strata = ["s", "s", "s", "t", "t", "t", "t"]
    null = [
        float(x @ y[list(order)])
        for order in itertools.permutations(range(7))
        if all(strata[i] == strata[j] for i, j in zip(order, range(7), strict=True))
    ]
    assert len(null) == 144
    z = (x @ y - np.mean(null)) / np.std(null)
    assert stratified_normal_pvalue(x, y, strata) == pytest.approx(2 * stats.norm.sf(abs(z)))


def test_normal_p_of_one_stratum_by_hand() -> None:
    # one stratum: the permutation variance of Pearson's r is 1/(n - 1), so z = r·√(n - 1)
    x, y = _data(20, seed=3)
    r = np.corrcoef(x, y)[0, 1]
    expected = 2 * stats.norm.sf(abs(r) * math.sqrt(19))
    assert stratified_normal_pvalue(x, y, ["one"] * 20) == pytest.approx(expected)
    assert stratified_normal_pvalue(x, -y, ["one"] * 20) == pytest.approx(expected)


def test_normal_p_is_close_to_a_large_monte_carlo_test_where_that_one_is_informative() -> None:
    x, y = _data(60, seed=5)
    y = 0.5 * x + np.random.default_rng(6).normal(size=60)
    strata = np.repeat(["a", "b", "c"], 20)
    ranked_x, ranked_y = within_strata_ranks(x, strata), within_strata_ranks(y, strata)
    monte_carlo = stratified_permutation_test(
        ranked_y, strata, lambda r, axis=-1: r @ ranked_x, n_resamples=100_000, seed=0
    )
    normal = stratified_normal_pvalue(ranked_x, ranked_y, strata)
    assert 0.001 < monte_carlo.pvalue < 0.2
    assert normal == pytest.approx(monte_carlo.pvalue, rel=0.25)


def test_normal_p_is_undefined_without_variation_within_a_stratum() -> None:
    assert math.isnan(stratified_normal_pvalue([1.0, 2.0], [3.0, 3.0], ["a", "a"]))
    assert math.isnan(stratified_normal_pvalue([1.0, 2.0], [3.0, 4.0], ["a", "b"]))


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
    fit = mixed_coefficient(frame, "score", "metric", ["size"], "language", 0.95)
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
    fit = mixed_coefficient(frame, "score", "metric", [], "language", 0.95)
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
    fit = mixed_coefficient(frame, "score", "metric", [], "language", 0.95)
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
    # a constant covariate removes nothing: partial ρ is ρ
    constant = np.ones((len(x), 1))
    assert float(partial_spearman(x, y, constant)) == pytest.approx(rho, abs=1e-9)
    # within one stratum the within-strata ρ is ρ; with strata it is symmetric and bounded
    assert within_strata_spearman(x, y, ["one"] * len(x)) == pytest.approx(rho, abs=1e-9)
    group = [g for _, _, g in rows]
    within = within_strata_spearman(x, y, group)
    if not math.isnan(within):
        assert within == pytest.approx(within_strata_spearman(y, x, group), abs=1e-12)
        assert -1 - 1e-12 <= within <= 1 + 1e-12
