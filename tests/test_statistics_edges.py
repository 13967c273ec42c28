"""Edge cases and settings of the statistics package (undefined resamples, warnings, axes,
tolerances, notes of a doubtful fit, missing pairs), each against an independent oracle:
hand counts, brute-force enumeration, scipy, statsmodels. They kill the mutants that the
tests of test_statistics.py let survive (docs/mutation.md)."""

from __future__ import annotations

import inspect
import itertools
import math
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from tokstudy.errors import TokstudyError
from tokstudy.statistics.bootstrap import _seed_means, bootstrap_interval
from tokstudy.statistics.correlation import (
    spearman,
    within_strata_ranks,
    within_strata_spearman,
)
from tokstudy.statistics.mixed import coefficient_of, fit_note, mixed_coefficient
from tokstudy.statistics.permutation import arrangements, stratified_permutation_test
from tokstudy.statistics.significance import holm, seed_summary, wilcoxon_table

# ---------------------------------------------------------------- bootstrap


def _drawn_spearman(x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Spearman's ρ of each paired resample, drawn as ``scipy.stats.bootstrap`` draws them
    (``rng.integers(0, n, (B, n))``), one resample at a time; NaN for a constant one."""
    draws = np.random.default_rng(seed).integers(0, len(x), (n_resamples, len(x)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return np.array([stats.spearmanr(x[d], y[d]).statistic for d in draws])


def test_undefined_resamples_are_counted_and_left_out_of_the_interval() -> None:
    # 2 of 5 values differ: a resample that draws only the 3 zeros has no ρ
    x, y = np.array([0.0, 0, 0, 1, 2]), np.array([0.3, 0.1, 0.2, 0.5, 0.4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN resamples are expected: no warning escapes
        interval = bootstrap_interval((x, y), spearman, n_resamples=100, confidence=0.9, seed=3)
    drawn = _drawn_spearman(x, y, 100, 3)
    assert interval.degenerate == np.isnan(drawn).sum() > 0
    kept = drawn[~np.isnan(drawn)]
    assert (interval.low, interval.high) == pytest.approx(tuple(np.percentile(kept, [5, 95])))


def test_an_interval_with_no_defined_resample_is_nan() -> None:
    x, y = np.zeros(6), np.arange(6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        interval = bootstrap_interval((x, y), spearman, n_resamples=40, confidence=0.95, seed=0)
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert interval.degenerate == 40 and np.isnan(interval.distribution).sum() == 40


def test_warnings_other_than_undefined_resamples_reach_the_caller() -> None:
    def mean_with_a_warning(values: np.ndarray, axis: int = -1) -> np.ndarray:
        warnings.warn("a statistic's own warning", UserWarning, stacklevel=2)
        return np.mean(values, axis=axis)

    with pytest.warns(UserWarning, match="a statistic's own warning"):
        bootstrap_interval(
            (np.arange(5.0),), mean_with_a_warning, n_resamples=10, confidence=0.9, seed=0
        )


def test_a_statistic_of_one_resample_at_a_time_is_not_given_a_batch() -> None:
    # it takes ``axis`` but computes one ρ: scipy must call it per resample (vectorized=False)
    def one_rho(a: np.ndarray, b: np.ndarray, axis: int = -1) -> float:
        return stats.spearmanr(a, b).statistic

    x, y = np.arange(8.0), np.array([2.0, 1, 4, 3, 6, 5, 8, 7])
    interval = bootstrap_interval(
        (x, y), one_rho, n_resamples=30, confidence=0.9, seed=1, vectorized=False
    )
    drawn = _drawn_spearman(x, y, 30, 1)
    assert np.allclose(interval.distribution, drawn, equal_nan=True)


def test_a_cell_without_replicates_has_no_score_in_any_resample_and_no_warning() -> None:
    # a cell whose runs were all left out keeps its place with no score (NaN, not numpy's
    # "mean of empty slice" or "invalid value" in a job's log); the others' seeds are
    # resampled as ever (two draws from {1, 3} average to 1, 2 or 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores_of = _seed_means([np.array([1.0, 3.0]), np.array([]), np.array([2.0])], seed=0)
        drawn = scores_of(np.array([[0, 1, 2]] * 200))
    assert np.isnan(drawn[:, 1]).all()
    assert set(drawn[:, 0]) == {1.0, 2.0, 3.0}
    assert drawn[:, 2].tolist() == [2.0] * 200
    assert np.isnan(scores_of(np.array([1, 0]))[0])


# ---------------------------------------------------------------- correlation


def test_undefined_correlations_are_nan_without_warnings() -> None:
    x, constant = np.array([3.0, 1, 4, 2, 5, 9]), np.full(6, 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(float(spearman(x, constant)))
        assert math.isnan(within_strata_spearman(x, constant, ["a", "b"] * 3))
        batch = within_strata_spearman(np.stack([x, x]), np.stack([constant, x[::-1]]), ["a"] * 6)
        assert math.isnan(batch[0])
        assert batch[1] == pytest.approx(stats.spearmanr(x, x[::-1]).statistic)


def test_spearman_along_the_first_axis() -> None:
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    expected = [stats.spearmanr(x[:, j], y[:, j]).statistic for j in range(3)]
    assert spearman(x, y, axis=0) == pytest.approx(expected)


def test_within_strata_ranks_of_integers_and_of_a_batch() -> None:
    strata = ["a", "a", "a", "b", "b"]
    # stratum b has 2 values: its centered ranks are ±0.5, kept although the input is int
    assert within_strata_ranks([3, 1, 2, 5, 4], strata) == pytest.approx([1, -1, 0, 0.5, -0.5])
    batch = np.array([[3.0, 1, 2, 5, 4], [1.0, 2, 3, 4, 5], [2.0, 2, 1, 9, 9]])
    expected = [within_strata_ranks(row, strata) for row in batch]
    assert within_strata_ranks(batch, strata) == pytest.approx(np.array(expected))
    assert expected[2] == pytest.approx([0.5, 0.5, -1, 0, 0])  # ties: average ranks


def test_strata_labels_of_mixed_types_are_compared_as_text() -> None:
    # a missing label (None) among names cannot be sorted with them; as text it is a stratum
    strata = ["a", None, "a", None, "a"]
    assert arrangements(strata) == math.factorial(3) * math.factorial(2)
    assert within_strata_ranks([5.0, 2, 1, 3, 3], strata) == pytest.approx([1, -0.5, -1, 0.5, 0])


# ---------------------------------------------------------------- permutation


def test_statistics_within_the_tolerance_count_as_ties() -> None:
    # the statistic of each ordering of y is set by hand; observed T = 4, one unit of
    # least precision there is u = 4 eps, the tolerance 100 eps · |T| = 100 u
    u = 4 * np.finfo(float).eps
    by_order = {
        (0.0, 1.0, 2.0): 4.0,  # the observed ordering
        (0.0, 2.0, 1.0): 4.0 + 50 * u,  # a tie: inside the tolerance
        (1.0, 0.0, 2.0): 4.0 + 101 * u,  # just outside it: greater
        (1.0, 2.0, 0.0): 5.0,
        (2.0, 0.0, 1.0): 6.0,
        (2.0, 1.0, 0.0): 7.0,
    }

    def statistic(batch: np.ndarray, axis: int = -1) -> np.ndarray | float:
        values = np.array([by_order[tuple(row)] for row in np.atleast_2d(batch)])
        return values if np.ndim(batch) > 1 else values[0]

    result = stratified_permutation_test(
        np.arange(3.0), ["s"] * 3, statistic, n_resamples=10, seed=0
    )
    # exact over 3! = 6 orderings: T* ≤ T + tol for 2 of them, T* ≥ T - tol for all 6
    assert result.exact and result.statistic == 4.0
    assert result.pvalue == pytest.approx(2 * 2 / 6)


def test_the_null_statistic_is_taken_along_the_last_axis() -> None:
    # a statistic whose own default axis is 0, as numpy's and scipy's are
    x = np.array([0.5, 1.0, 3.0, 2.0, 4.5])
    y = np.array([1.0, 2.0, 4.0, 3.0, 0.0])

    def statistic(batch: np.ndarray, axis: int = 0) -> np.ndarray:
        return np.sum(batch * x, axis=axis)

    result = stratified_permutation_test(y, ["s"] * 5, statistic, n_resamples=200, seed=0)
    null = np.array([x @ y[list(order)] for order in itertools.permutations(range(5))])
    observed = x @ y
    tolerance = 1e-12
    less, greater = np.mean(null <= observed + tolerance), np.mean(null >= observed - tolerance)
    assert result.exact and result.permutations == 120
    assert result.pvalue == pytest.approx(min(1, 2 * min(less, greater)))


# ---------------------------------------------------------------- mixed model


def _mixed_frame(seed: int, n: int, groups: int, covariate: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"score": rng.normal(size=n), "metric": rng.normal(size=n)})
    if covariate:
        frame["size"] = rng.normal(size=n)
    frame["language"] = np.resize(["a", "b", "c"][:groups], n)
    return frame


def _statsmodels_fit(frame: pd.DataFrame, covariates: list[str]) -> tuple[object, list[str]]:
    """The REML fit of statsmodels' MixedLM on the z-scored variables, and its warnings."""
    numeric = ["score", "metric", *covariates]
    data = frame.copy()
    data[numeric] = (data[numeric] - data[numeric].mean()) / data[numeric].std()
    formula = "score ~ " + " + ".join(["metric", *covariates])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smf.mixedlm(formula, data, groups=data["language"]).fit(reml=True)
    return fit, [str(w.message) for w in caught]


def test_mixed_coefficient_is_statsmodels_reml_fit_with_its_interval() -> None:
    rng = np.random.default_rng(2)
    groups = np.repeat(["a", "b", "c", "d"], 10)
    metric, size = rng.normal(size=40), rng.normal(3, 2, size=40)
    offsets = np.repeat([-1.0, 0.0, 0.5, 2.0], 10)
    score = 5 + 0.6 * metric + 0.2 * size + offsets + rng.normal(scale=0.5, size=40)
    frame = pd.DataFrame({"score": score, "metric": metric, "size": size, "language": groups})
    fit, messages = _statsmodels_fit(frame, ["size"])
    assert fit.converged and not messages
    ours = mixed_coefficient(frame, "score", "metric", ["size"], ["language"], 0.9)
    low, high = fit.conf_int(alpha=0.1).loc["metric"]
    # the same model, written as one variance component: the same REML optimum
    assert (ours.estimate, ours.low, ours.high) == pytest.approx(
        (fit.params["metric"], low, high), rel=1e-4
    )
    assert ours.pvalue == pytest.approx(fit.pvalues["metric"], rel=1e-3)
    assert ours.note == ""


# statsmodels' own warnings (regression/mixed_linear_model.py): the note reads the Hessian's
HESSIAN = "The Hessian matrix at the estimated parameter values is not positive definite."
RETRY = "Retrying MixedLM optimization with lbfgs"


def test_the_warnings_the_note_reads_are_statsmodels_own() -> None:
    import statsmodels
    import statsmodels.regression.mixed_linear_model as mixed_linear_model

    source = inspect.getsource(mixed_linear_model)
    for message in (HESSIAN,):
        # statsmodels breaks the Hessian message over two string literals
        words = message.split()
        assert all(word in source for word in words), (
            f"statsmodels {statsmodels.__version__} no longer warns {message!r}: "
            "statistics.mixed.fit_note reads it"
        )


@pytest.mark.parametrize(
    ("converged", "messages", "at_boundary", "note"),
    [
        (True, [], [], ""),
        (True, [RETRY], [], ""),
        (False, [RETRY], [], "did not converge"),
        (True, [], ["language"], "language variance at its boundary (about 0)"),
        (True, [], ["a", "b"], "a and b variance at its boundary (about 0)"),
        (True, [HESSIAN], [], "Hessian not positive definite: interval unreliable"),
        (
            False,
            [RETRY, HESSIAN],
            ["language"],
            "did not converge; language variance at its boundary (about 0); "
            "Hessian not positive definite: interval unreliable",
        ),
        (
            False,
            [HESSIAN, RETRY],
            [],
            "did not converge; Hessian not positive definite: interval unreliable",
        ),
    ],
)
def test_a_doubtful_fit_says_why(
    converged: bool, messages: list[str], at_boundary: list[str], note: str
) -> None:
    # the flags are set by hand: which fixture statsmodels fails on depends on the BLAS
    assert fit_note(converged, messages, at_boundary) == note


def _fit_like(converged: bool, estimate: float, error: float, pvalue: float) -> SimpleNamespace:
    series = {
        name: pd.Series({"Intercept": 0.0, "v1": value})
        for name, value in (("params", estimate), ("bse", error), ("pvalues", pvalue))
    }
    return SimpleNamespace(converged=converged, **series)


def test_the_coefficient_is_read_from_the_fit_with_its_wald_interval() -> None:
    fit = _fit_like(True, 0.4, 0.1, 0.003)
    ours = coefficient_of(fit, "v1", [], [], 0.95)
    half = 1.959963984540054 * 0.1  # the 97.5 % point of the normal, by table
    assert (ours.estimate, ours.low, ours.high) == pytest.approx((0.4, 0.4 - half, 0.4 + half))
    assert ours.pvalue == 0.003 and ours.note == ""


@pytest.mark.parametrize(
    ("converged", "at_boundary", "note"),
    [
        (True, [], "no standard error"),
        (True, ["language"], "language variance at its boundary (about 0)"),
        (False, ["language"], "did not converge; language variance at its boundary (about 0)"),
    ],
)
def test_a_fit_without_a_standard_error_has_no_interval_and_keeps_its_note(
    converged: bool, at_boundary: list[str], note: str
) -> None:
    fit = _fit_like(converged, 0.4, np.nan, np.nan)
    ours = coefficient_of(fit, "v1", [], at_boundary, 0.95)
    assert ours.estimate == 0.4
    assert math.isnan(ours.low) and math.isnan(ours.high) and math.isnan(ours.pvalue)
    assert ours.note == note


@pytest.mark.parametrize(
    ("seed", "n", "groups", "covariates"),
    [(1, 8, 2, []), (3, 10, 2, ["size"]), (0, 8, 2, []), (5, 30, 3, ["size"])],
)
def test_the_note_is_what_statsmodels_own_fit_says(
    seed: int, n: int, groups: int, covariates: list[str]
) -> None:
    # small fixtures on which statsmodels struggles: whether it converges, and how, varies
    # with the BLAS kernels; whatever it does here, the note and the interval say it
    frame = _mixed_frame(seed, n, groups, covariate=bool(covariates))
    fit, messages = _statsmodels_fit(frame, covariates)
    ours = mixed_coefficient(frame, "score", "metric", covariates, ["language"], 0.95)
    assert ("did not converge" in ours.note) == (not fit.converged)
    # the group variance of the random-intercept fit, against the boundary's threshold
    assert ("boundary" in ours.note) == (float(fit.cov_re.iloc[0, 0]) < 1e-3)
    assert ("Hessian" in ours.note) == any(HESSIAN in m for m in messages)
    assert ours.estimate == pytest.approx(fit.params["metric"], rel=1e-4, abs=1e-6)
    assert math.isnan(ours.low) == math.isnan(fit.bse["metric"])


def test_a_rank_deficient_design_is_not_fitted_and_says_so() -> None:
    # the covariate is twice the metric: doubling is exact in floating point, so the
    # z-scored columns are equal to the last bit and the design has rank 2 of 3 anywhere
    frame = _mixed_frame(4, 12, 3)
    frame["size"] = 2 * frame["metric"]
    z = {c: (frame[c] - frame[c].mean()) / frame[c].std() for c in ("metric", "size")}
    assert z["metric"].equals(z["size"])
    ours = mixed_coefficient(frame, "score", "metric", ["size"], ["language"], 0.95)
    assert all(math.isnan(v) for v in (ours.estimate, ours.low, ours.high, ours.pvalue))
    assert ours.note == "design rank-deficient (predictor or covariates collinear): not fitted"


# ---------------------------------------------------------------- significance


def test_holm_reads_a_missing_p_value_as_nan() -> None:
    # two tests: 0.01 · 2 = 0.02 and 0.04 · 1 = 0.04
    adjusted = holm([0.04, None, 0.01])
    assert adjusted[[0, 2]] == pytest.approx([0.04, 0.02]) and math.isnan(adjusted[1])


def test_seed_summary_groups_in_sorted_order_and_counts_present_values() -> None:
    frame = pd.DataFrame(
        {
            "tokenizer": ["unigram", "unigram", "unigram", "bpe", "bpe"],
            "value": [0.5, np.nan, 0.7, 0.2, 0.4],
        }
    )
    table = seed_summary(frame, ["tokenizer"])
    assert list(table["tokenizer"]) == ["bpe", "unigram"]
    assert list(table["n"]) == [2, 2]
    assert table["mean"].tolist() == pytest.approx([0.3, 0.6])
    assert table["std"].tolist() == pytest.approx([math.sqrt(0.02), math.sqrt(0.02)])


def test_wilcoxon_table_with_identical_single_and_missing_pairs() -> None:
    frame = pd.DataFrame(
        {
            "tokenizer": ["a"] * 3 + ["b"] * 3 + ["c"] + ["d"],
            "seed": [0, 1, 2, 0, 1, 2, 0, 5],
            "value": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4, 0.9],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = wilcoxon_table(frame).set_index(["a", "b"])
    identical = table.loc[("a", "b")]
    assert identical.n == 3 and identical.pvalue == 1.0 and math.isnan(identical.statistic)
    assert identical.median_diff == 0.0
    # one pair (seed 0): scipy's test of the single difference 0.1 - 0.4
    single = table.loc[("a", "c")]
    expected = stats.wilcoxon([0.1], [0.4])
    assert single.n == 1 and single.median_diff == pytest.approx(-0.3)
    assert (single.statistic, single.pvalue) == pytest.approx((expected.statistic, expected.pvalue))
    # no common seed: nothing to test
    missing = table.loc[("c", "d")]
    assert missing.n == 0 and missing.pvalue == 1.0
    assert math.isnan(missing.median_diff) and math.isnan(missing.statistic)


def test_wilcoxon_table_refuses_a_repeated_observation() -> None:
    frame = pd.DataFrame(
        {"tokenizer": ["a", "a", "b", "b"], "seed": [0, 0, 0, 1], "value": [0.1, 0.3, 0.2, 0.2]}
    )
    message = (
        r"^wilcoxon_table: 1 row\(s\) repeat the \(seed, tokenizer\) of an earlier row; "
        "each observation must be given once$"
    )
    with pytest.raises(TokstudyError, match=message):
        wilcoxon_table(frame)
