"""The correlation analysis: planted signals, oracles for every statistic in the table,
the study's cells table, ``tokstudy correlate`` and its bad input, a tiny workflow run."""

from __future__ import annotations

import gc
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats
from test_models_workflow import TINY_TRAINING
from workflow_support import snakemake

from tokstudy.analyses.correlation import table as correlation_module
from tokstudy.analyses.correlation.cells import SCORE_NOTES, check_cells, study_cells, study_scores
from tokstudy.analyses.correlation.markdown import correlation_markdown, sensitivity_markdown
from tokstudy.analyses.correlation.run import (
    OUTPUT_FILES,
    SUMMARY_FILE,
    Correlations,
    correlate,
    sensitivity,
)
from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.analyses.correlation.table import (
    COLUMNS,
    FLOOR_PERMUTATIONS,
    comparison_table,
    correlation_table,
    mixed_table,
    ranking,
    relabelling_test,
    unit_products,
)
from tokstudy.cli import main
from tokstudy.errors import TokstudyError
from tokstudy.statistics.correlation import within_strata_ranks
from tokstudy.statistics.mixed import Coefficient
from tokstudy.statistics.permutation import unit_permutation_test
from tokstudy.statistics.units import Units
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

FAST = CorrelationSettings(bootstrap_samples=200, permutations=20000, seed=1)
SIZES = (1000, 2000, 4000)


def _cells(rows: list[dict], scores: list[str]) -> pd.DataFrame:
    return check_cells(pd.DataFrame(rows).astype(str), scores, "test cells")


def _grid(
    rng: np.random.Generator, metrics, score, languages=("xx",), seeds=(0, 1), tokenizers=7
) -> list:
    """``tokenizers`` tokenizers × 3 sizes per language; ``metrics``/``score`` map (size,
    quality, rng); a tokenizer's quality is its own in every language."""
    qualities = rng.normal(size=tokenizers)
    rows = []
    for language in languages:
        for tokenizer, quality in zip("abcdefghijklmnop"[:tokenizers], qualities, strict=True):
            for size in SIZES:
                values = {name: f(size, quality, rng) for name, f in metrics.items()}
                for seed in seeds:
                    rows.append(
                        {
                            "language": language,
                            "tokenizer": tokenizer,
                            "vocab_size": size,
                            "seed": seed,
                            **values,
                            "score": score(size, quality, rng),
                        }
                    )
    return rows


def _size_only(weight: float):
    return lambda s, q, r: weight * np.log(s) + r.normal(0, 0.3)


#: metrics that follow vocabulary size and nothing else (plus noise)
SIZE_ONLY = {f"m{k}": _size_only(k + 1.0) for k in range(3)}


def test_only_size_moves_the_score_no_metric_survives_adjustment(monkeypatch) -> None:
    # statsmodels' Holm calls gc.collect() (about 60 ms): skipped here for speed only
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    settings = CorrelationSettings(bootstrap_samples=20, permutations=20000, seed=0)
    significant, plain = 0, 0
    for replicate in range(200):
        rng = np.random.default_rng(replicate)
        rows = _grid(rng, SIZE_ONLY, lambda s, q, r: np.log(s) + r.normal(0, 0.3))
        table = correlation_table(_cells(rows, ["score"]), ["score"], settings)
        significant += bool((table["p_adjusted"] < 0.05).any())
        plain += bool((table["spearman_low"] > 0).all())
    assert significant <= 14  # 7 %: Holm keeps the family-wise rate near 5 %
    # the size-blind statistic finds every metric "predictive" in nearly every replicate
    assert plain >= 180


def test_a_metric_carrying_a_within_size_signal_is_found() -> None:
    metrics = {
        "signal": lambda s, q, r: np.log(s) + q,
        "noise": lambda s, q, r: np.log(s) + r.normal(),
    }
    rows = _grid(
        np.random.default_rng(8), metrics, lambda s, q, r: np.log(s) + q + r.normal(0, 0.2)
    )
    table = correlation_table(_cells(rows, ["score"]), ["score"], FAST).set_index("intrinsic")
    assert table.loc["signal", "p_adjusted"] < 0.01
    assert table.loc["noise", "p_adjusted"] > 0.05
    assert table.loc["signal", "partial_low"] > 0
    # 7 tokenizers: 7! = 5040 relabellings, all enumerated; the floor 2/5040
    assert table.loc["signal", "p_method"] == "exact"
    assert table.loc["signal", "permutations"] == 5040 and table.loc["signal", "units"] == 7
    assert table.loc["signal", "min_attainable_p"] == pytest.approx(2 / 5040)


def test_a_monte_carlo_p_at_its_floor_is_drawn_again_and_kept_at_the_new_floor() -> None:
    rng = np.random.default_rng(3)
    metrics = {"metric": lambda s, q, r: q}
    rows = _grid(rng, metrics, lambda s, q, r: q, languages=("xx", "yy", "zz"), tokenizers=12)
    pooled = correlation_table(_cells(rows, ["score"]), ["score"], FAST).set_index("scope")
    pooled = pooled.loc["pooled"]
    # 12! orderings of the tokenizers: Monte Carlo; none of the 20000 drawn, nor of the
    # 1,000,000 drawn after them, is as concordant as the data
    floor = 2 / (FLOOR_PERMUTATIONS + 1)
    assert pooled["permutations"] == FLOOR_PERMUTATIONS
    assert pooled["min_attainable_p"] == pytest.approx(floor)
    assert pooled["p_method"] == "monte_carlo"
    assert f"p at the floor of {FAST.permutations} orderings" in pooled["note"]
    assert (
        f"no drawn ordering as extreme: p is the floor of {FLOOR_PERMUTATIONS}" in (pooled["note"])
    )
    # every stratum ranks the 12 tokenizers alike: only the identity relabelling (1 in
    # 12! ≈ 4.8·10⁸) is as concordant, so no draw is, and each tail is 1/(B + 1): a valid p
    assert pooled["partial_spearman"] == pytest.approx(1)
    assert pooled["p_within_size"] == pytest.approx(floor)


def test_a_p_at_the_floor_of_few_orderings_is_measured_with_more(monkeypatch) -> None:
    monkeypatch.setattr(correlation_module, "FLOOR_PERMUTATIONS", 100_000)
    settings = CorrelationSettings(bootstrap_samples=20, permutations=500, seed=1)
    rng = np.random.default_rng(2)
    metrics = {"metric": lambda s, q, r: q + r.normal(0, 0.9)}
    rows = _grid(rng, metrics, lambda s, q, r: q, languages=("xx", "yy", "zz"), tokenizers=12)
    cells = _cells(rows, ["score"])
    pooled = correlation_table(cells, ["score"], settings).set_index("scope").loc["pooled"]
    assert pooled["p_method"] == "monte_carlo" and pooled["permutations"] == 100_000
    assert pooled["note"] == "p at the floor of 500 orderings: 100000 drawn"
    # between the two floors: 500 orderings could not measure it, 100,000 do
    assert 2 / 100_001 < pooled["p_within_size"] < 2 / 501
    assert pooled["min_attainable_p"] == pytest.approx(2 / 100_001)


def test_a_p_at_the_floor_of_as_many_orderings_as_the_redraw_is_not_drawn_again(
    monkeypatch,
) -> None:
    monkeypatch.setattr(correlation_module, "FLOOR_PERMUTATIONS", 500)
    settings = CorrelationSettings(bootstrap_samples=20, permutations=500, seed=1)
    rows = _grid(np.random.default_rng(3), {"metric": lambda s, q, r: q}, lambda s, q, r: q,
                 tokenizers=9)  # fmt: skip
    (row,) = correlation_table(_cells(rows, ["score"]), ["score"], settings).itertuples()
    assert row.permutations == 500 and row.p_within_size == pytest.approx(2 / 501)
    assert row.note == "no drawn ordering as extreme: p is the floor of 500"


def _tiny(
    score: list[float], metric: list[float], languages=("xx",), sizes=(1000,), tokenizers="abcd"
) -> list:
    rows = []
    values = iter(zip(metric, score, strict=True))
    for language in languages:
        for size in sizes:
            for tokenizer in tokenizers:
                m, s = next(values)
                rows.append(
                    {
                        "language": language,
                        "tokenizer": tokenizer,
                        "vocab_size": size,
                        "seed": 0,
                        "metric": m,
                        "other": -m * m,
                        "score": s,
                    }
                )
    return rows


def test_intervals_resample_tokenizers_with_all_their_cells_as_scipy_would() -> None:
    # oracle: scipy's bootstrap over the 7 tokenizers (same generator), each drawn
    # tokenizer's cells gathered by hand and the statistics computed on them by scipy
    rng = np.random.default_rng(2)
    rows = _grid(
        rng, {"metric": lambda s, q, r: q + r.normal()}, lambda s, q, r: np.log(s) + q, seeds=(0,)
    )
    cells = _cells(rows, ["score"])
    table = correlation_table(cells, ["score"], FAST).set_index("intrinsic")
    x, y = cells["metric"].to_numpy(), cells["score"].to_numpy()
    log_size = np.log(cells["vocab_size"].to_numpy())
    names = sorted(cells["tokenizer"].unique())
    own = [np.flatnonzero(cells["tokenizer"].to_numpy() == name) for name in names]
    # each tokenizer's cells in the order of their sizes: a drawn one takes those places
    own = [c[np.argsort(cells["vocab_size"].to_numpy()[c].astype(str), kind="stable")] for c in own]

    def within(a, b, sizes):
        ranked = [
            np.concatenate([stats.rankdata(v[sizes == s]) - (np.sum(sizes == s) + 1) / 2
                            for s in np.unique(sizes)])
            for v in (a, b)
        ]  # fmt: skip
        return ranked[0] @ ranked[1] / np.sqrt((ranked[0] @ ranked[0]) * (ranked[1] @ ranked[1]))

    def reference(statistic):
        def on_tokenizers(drawn):
            picked = np.concatenate([own[int(t)] for t in drawn])
            places = np.concatenate([own[0]] * len(drawn))  # the sizes, in order
            return statistic(picked, places)

        return stats.bootstrap(
            (np.arange(len(names)),),
            on_tokenizers,
            vectorized=False,
            n_resamples=200,
            confidence_level=0.95,
            method="percentile",
            rng=np.random.default_rng(1),
        ).confidence_interval

    sizes = cells["vocab_size"].to_numpy()
    plain = reference(lambda c, p: stats.spearmanr(x[c], y[c]).statistic)
    partial = reference(lambda c, p: within(x[c], y[c], sizes[p]))
    size = reference(lambda c, p: stats.spearmanr(log_size[c], y[c]).statistic)
    row = table.loc["metric"]
    assert (row["spearman_low"], row["spearman_high"]) == pytest.approx((plain.low, plain.high))
    assert (row["partial_low"], row["partial_high"]) == pytest.approx((partial.low, partial.high))
    assert (row["size_low"], row["size_high"]) == pytest.approx((size.low, size.high))
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert row["partial_spearman"] == pytest.approx(within(x, y, sizes))


def _relabelled_pvalue(cells: pd.DataFrame, metric: str) -> tuple[float, int]:
    """Oracle: the within-size ρ recomputed from the table for every relabelling of its
    tokenizers (tokenizer t's scores given to π(t) in every size), and scipy's two-sided p
    over them; with the number of relabellings."""
    names = sorted(cells["tokenizer"].unique())
    score = cells.set_index(["tokenizer", "vocab_size"])["score"]
    sizes = cells["vocab_size"].to_numpy()

    def rho(mapping: dict) -> float:
        moved = np.array(
            [score[mapping[t], s] for t, s in zip(cells["tokenizer"], sizes, strict=True)]
        )
        a, b = (
            np.concatenate(
                [
                    stats.rankdata(v[sizes == s]) - (np.sum(sizes == s) + 1) / 2
                    for s in np.unique(sizes)
                ]
            )
            for v in (cells[metric].to_numpy(), moved)
        )  # fmt: skip  (both ranked stratum by stratum, in the same cell order)
        return float(a @ b / np.sqrt((a @ a) * (b @ b)))

    null = [rho(dict(zip(names, order, strict=True))) for order in itertools.permutations(names)]
    observed = rho({t: t for t in names})
    null = np.array(null)
    less, greater = np.mean(null <= observed + 1e-12), np.mean(null >= observed - 1e-12)
    return float(min(1, 2 * min(less, greater))), len(null)


def _six(metric: list[float], score: list[float]) -> pd.DataFrame:
    """6 tokenizers × 2 sizes, one seed, the given values in tokenizer-then-size order."""
    rows = [
        {"language": "xx", "tokenizer": t, "vocab_size": size, "seed": 0,
         "metric": m, "other": -m * m, "score": s}
        for (t, size), m, s in zip(
            itertools.product("abcdef", (1000, 2000)), metric, score, strict=True
        )
    ]  # fmt: skip
    return _cells(rows, ["score"])


SIX_METRIC = [0.1, 1.5, 0.4, 1.1, 0.2, 1.2, 0.3, 1.9, 0.9, 0.7, 0.6, 1.0]
SIX_SCORE = [1.0, 5.0, 3.0, 4.0, 2.0, 4.5, 2.5, 6.0, 2.2, 3.9, 1.5, 5.5]


def test_within_size_p_relabels_tokenizers_by_brute_force_and_holm_by_hand() -> None:
    # 6 tokenizers at 2 sizes: 6! = 720 relabellings, the same one in both sizes (not
    # 720² orderings of cells)
    cells = _six(SIX_METRIC, SIX_SCORE)
    table = correlation_table(cells, ["score"], FAST).set_index("intrinsic")
    for metric in ("metric", "other"):
        expected, count = _relabelled_pvalue(cells, metric)
        assert count == 720
        assert table.loc[metric, "p_within_size"] == pytest.approx(expected)
        assert table.loc[metric, "p_method"] == "exact"
    assert table.loc["metric", "min_attainable_p"] == pytest.approx(2 / 720)
    # Holm over the two metrics by hand: the smaller p doubled, the larger kept (monotone)
    small, large = sorted(table["p_within_size"])
    by_hand = {small: min(1, 2 * small), large: max(min(1, 2 * small), large)}
    for _, row in table.iterrows():
        assert row["p_adjusted"] == pytest.approx(by_hand[row["p_within_size"]])


def test_a_primary_metric_comes_first_and_is_adjusted_alone() -> None:
    cells = _six(SIX_METRIC, SIX_SCORE)
    settings = CorrelationSettings(bootstrap_samples=50, permutations=20000, primary="other")
    table = correlation_table(cells, ["score"], settings)
    assert list(table["intrinsic"]) == ["other", "metric"]  # declared first, listed first
    assert list(table["primary"]) == [True, False]
    # each is a family of one: no adjustment at all (Holm over both would double the smaller)
    assert list(table["p_adjusted"]) == pytest.approx(list(table["p_within_size"]))
    plain = correlation_table(cells, ["score"], FAST).set_index("intrinsic")
    assert plain["p_adjusted"].min() == pytest.approx(min(1, 2 * plain["p_within_size"].min()))
    assert not plain["primary"].any()
    with pytest.raises(TokstudyError, match=r"^primary metric 'fertility' is not an intrinsic"):
        correlate(cells, ["score"], CorrelationSettings(primary="fertility"))


def test_a_primary_metric_must_be_a_study_metric_with_its_split() -> None:
    study = _study(nmt={}, analyses={"correlation": {"primary": "mu_heldout"}})
    assert StudyPlan(Study(study)).analyses["correlation"].settings()["primary"] == "mu_heldout"
    study["analyses"]["correlation"]["primary"] = "mu"
    with pytest.raises(TokstudyError) as error:
        StudyPlan(Study(study))
    assert str(error.value) == (
        "config key analyses.correlation.primary: 'mu' is not a metric of the study with its "
        "split; valid choices: mu_train, mu_heldout"
    )


def test_four_tokenizers_cannot_reach_005_so_no_p_is_given(tmp_path) -> None:
    # one size, 4 tokenizers: 4! = 24 relabellings, two-sided floor 2/24 = 0.083
    cells = _cells(_tiny([1, 2, 3, 4.0], [10, 20, 30, 40.0]), ["score"])
    table = correlation_table(cells, ["score"], FAST).set_index("intrinsic")
    row = table.loc["metric"]
    assert math.isnan(row["p_within_size"]) and math.isnan(row["p_adjusted"])
    assert row["min_attainable_p"] == pytest.approx(2 / 24)
    assert "the smallest attainable p is 0.0833 > 0.05, no p" in row["note"]
    assert row["partial_spearman"] == pytest.approx(1)  # the estimate stays, with its interval
    assert math.isnan(row["size_spearman"])  # one size: no size baseline
    markdown = correlation_markdown(table.reset_index(), FAST)
    line = next(line for line in markdown.splitlines() if line.startswith("| metric"))
    assert re.search(r"\| 0\.083 +\|", line) and line.rstrip(" |").endswith("no p")


def test_pooled_rows_only_with_more_than_one_scope() -> None:
    rng = np.random.default_rng(0)
    metrics = {"metric": lambda s, q, r: q + r.normal()}
    one_cells = _cells(_grid(rng, metrics, lambda s, q, r: q, tokenizers=8), ["score"])
    one = correlation_table(one_cells, ["score"], FAST)
    assert list(one["scope"]) == ["xx"]
    two_cells = _cells(
        _grid(rng, metrics, lambda s, q, r: q, languages=("xx", "yy"), tokenizers=8), ["score"]
    )
    two = correlation_table(two_cells, ["score"], FAST)
    assert list(two["scope"]) == ["xx", "yy", "pooled"]
    pooled = two.set_index("scope").loc["pooled"]
    # a tokenizer is one unit over both languages: 8, not 16
    assert pooled["n"] == 48 and pooled["units"] == 8
    # 8! = 40320 relabellings: more than the 20000 drawn (Monte Carlo)
    assert pooled["min_attainable_p"] == pytest.approx(2 / 20001)
    assert pooled["p_method"] == "monte_carlo" and pooled["permutations"] == FAST.permutations
    mixed = mixed_table(two_cells, ["score"], FAST)
    # every scope has its model: crossed random intercepts need tokenizers, not languages
    assert list(mixed["scope"]) == ["xx", "yy", "pooled"]
    assert set(mixed["random_effect"]) == {"tokenizer"} and set(mixed["groups"]) == {8}


def _ranked_table(rows: list[tuple]) -> pd.DataFrame:
    columns = ["intrinsic", "partial_spearman", "partial_low", "partial_high", "p_adjusted"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.assign(
        score="s",
        scope="xx",
        n=12,
        units=6,
        p_within_size=frame["p_adjusted"],
        min_attainable_p=0.001,
        primary=False,
        score_note="",
    )


def test_ranking_by_adjusted_p_with_ties_where_intervals_overlap() -> None:
    table = _ranked_table(
        [
            ("weak", 0.2, -0.1, 0.4, 0.40),
            ("best", 0.9, 0.8, 0.95, 0.001),
            ("second", -0.6, -0.7, -0.5, 0.02),  # sign-aligned interval [0.5, 0.7]
            ("third", -0.55, -0.75, -0.45, 0.03),  # [0.45, 0.75] overlaps "second"
            ("untested", np.nan, np.nan, np.nan, np.nan),
        ]
    )
    ranked = ranking(table)
    assert list(ranked["intrinsic"]) == ["best", "second", "third", "weak"]
    assert list(ranked["rank"]) == [1, 2, 2, 4]
    assert list(ranked["tied"]) == [False, False, True, False]


def test_ranking_orders_each_score_and_scope_apart_and_breaks_equal_p_by_strength() -> None:
    # by hand: sorted by score, scope, adjusted p, then |ρ| (largest first), then name;
    # each (score, scope) ranks from 1, and its first metric ties nothing above it
    rows = [
        ("b", "xx", "m_small", 0.45, 0.35, 0.55, 0.01),  # overlaps m_first's [0.4, 0.6]
        ("b", "xx", "m_zero", 0.0, 0.5, 0.7, 0.02),  # ρ 0 is not turned round: ties too
        ("b", "xx", "m_last", 0.1, 0.0, 0.05, 0.03),  # apart: ranked by its place, 4th
        ("a", "xx", "m_only", 0.1, 0.05, 0.2, 0.5),
        ("a", "en", "z_far", 0.2, 0.9, 0.95, 0.01),  # same p as the next: weaker, later
        ("a", "en", "y_strong", -0.8, -0.9, -0.7, 0.01),  # oriented [0.7, 0.9]
        ("a", "en", "m_twin", 0.2, 0.1, 0.3, 0.01),  # equal p and |ρ|: by name
        ("a", "en", "m_gap", 0.1, np.nan, np.nan, 0.2),  # no interval: kept, never tied
        ("b", "xx", "m_first", -0.5, -0.6, -0.4, 0.001),  # opens b's xx after a's xx
        ("a", "en", "untested", 0.5, 0.4, 0.6, np.nan),
    ]
    columns = ["score", "scope", "intrinsic", "partial_spearman", "partial_low"]
    table = pd.DataFrame(rows, columns=[*columns, "partial_high", "p_adjusted"]).assign(
        n=9, units=3, p_within_size=0.0, min_attainable_p=0.001, primary=False, score_note=""
    )
    ranked = ranking(table)
    assert list(ranked.columns) == [
        "score", "scope", "rank", "tied", "intrinsic", "n", "units", "partial_spearman",
        "partial_low", "partial_high", "p_within_size", "p_adjusted", "min_attainable_p",
        "primary", "score_note",
    ]  # fmt: skip
    assert list(ranked.index) == list(range(9))
    assert list(zip(ranked["score"], ranked["scope"], ranked["intrinsic"], strict=True)) == [
        (
            "a",
            "en",
            "y_strong",
        ),
        ("a", "en", "m_twin"),
        ("a", "en", "z_far"),
        ("a", "en", "m_gap"),
        ("a", "xx", "m_only"),
        ("b", "xx", "m_first"),
        ("b", "xx", "m_small"),
        ("b", "xx", "m_zero"),
        ("b", "xx", "m_last"),
    ]
    # m_twin [0.1, 0.3] is apart from y_strong [0.7, 0.9]; z_far [0.9, 0.95] is apart
    # from m_twin; m_only and m_first each open their (score, scope); m_small [0.35, 0.55]
    # overlaps m_first's oriented [0.4, 0.6], m_zero [0.5, 0.7] overlaps m_small
    assert list(ranked["rank"]) == [1, 2, 3, 4, 1, 1, 1, 1, 4]
    assert list(ranked["tied"]) == [False] * 6 + [True, True, False]


def test_mlm_scores_carry_the_pll_note_and_others_do_not(tmp_path) -> None:
    rng = np.random.default_rng(1)
    rows = _grid(rng, {"metric": lambda s, q, r: q + r.normal()}, lambda s, q, r: q)
    for row in rows:
        row["mlm_bits_per_char"] = row["score"] + rng.normal()
    cells = _cells(rows, ["score", "mlm_bits_per_char"])
    table = correlation_table(cells, ["score", "mlm_bits_per_char"], FAST).set_index("score")
    assert table.loc["mlm_bits_per_char", "score_note"] == SCORE_NOTES["mlm"]
    assert "Kauf & Ivanova 2023" in SCORE_NOTES["mlm"]
    assert table.loc["score", "score_note"] == ""


def _write(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_correlate_command_on_a_hand_made_table(tmp_path: Path, capsys) -> None:
    # 6 tokenizers, one size: "metric" orders the cells as the score does (ρ = 1, exact
    # p = 2/720); "other" = −metric² reverses them (ρ = −1, p = 2/720); Holm: 2 · 2/720
    rows = _tiny([1.0, 2, 3, 4, 5, 6], [1.0, 2, 3, 4, 5, 6], tokenizers="abcdef")
    cells = _write(tmp_path / "cells.csv", rows)
    out = tmp_path / "out"
    assert (
        main(
            [
                "correlate",
                str(cells),
                "--scores",
                "score",
                "--out",
                str(out),
                "--bootstrap-samples",
                "50",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES.values(), SUMMARY_FILE])
    table = pd.read_csv(out / "correlation.csv").set_index("intrinsic")
    required = [
        "score",
        "scope",
        "n",
        "spearman",
        "spearman_low",
        "spearman_high",
        "partial_spearman",
        "partial_low",
        "partial_high",
        "p_within_size",
        "p_adjusted",
        "min_attainable_p",
    ]
    assert set(required) <= set(table.columns)
    assert table.loc["metric", "spearman"] == pytest.approx(1)
    assert table.loc["other", "spearman"] == pytest.approx(-1)
    assert table.loc["metric", "partial_spearman"] == pytest.approx(1)
    assert table["p_within_size"].tolist() == pytest.approx([2 / 720, 2 / 720], rel=1e-5)
    assert table["p_adjusted"].tolist() == pytest.approx([4 / 720, 4 / 720], rel=1e-5)
    assert table["min_attainable_p"].tolist() == pytest.approx([2 / 720, 2 / 720], rel=1e-5)
    assert (table["scope"] == "xx").all() and (table["n"] == 6).all()
    markdown = (out / "correlation.md").read_text("utf-8")
    header = next(line for line in markdown.splitlines() if line.startswith("| intrinsic"))
    row = next(line for line in markdown.splitlines() if line.startswith("| metric"))
    names = [name.strip() for name in header.split("|")]
    values = dict(zip(names, [value.strip() for value in row.split("|")], strict=True))
    assert values["floor"] == ""  # printed only above 0.05
    assert values["p within size"] == "0.003" and values["units"] == "6"
    assert "wrote correlation.csv" in capsys.readouterr().out


def _bad(rows):
    frame = pd.DataFrame(rows)
    return frame


BASE = _tiny([1.0, 2, 3, 4], [1.0, 2, 4, 3])


@pytest.mark.parametrize(
    ("change", "scores", "message"),
    [
        (lambda f: f.drop(columns="seed"), "score", "missing column(s) seed"),
        (
            lambda f: f.assign(metric=["1", "x", "3", "4"]),
            "score",
            "column 'metric', row 3: 'x' is not a number",
        ),
        (lambda f: f, "score,bleu", "unknown score(s) bleu"),
        (lambda f: f.iloc[:3], "score", "3 cell(s), at least 4 are needed"),
        (lambda f: f.assign(metric=5.0, other=5.0), "score", "no intrinsic metric column left"),
        (lambda f: f.assign(metric=["1", "inf", "3", "4"]), "score", "'metric', row 3: 'inf'"),
        (lambda f: f.assign(metric=["1", "2", "-inf", "4"]), "score", "'metric', row 4: '-inf'"),
        (lambda f: f.assign(vocab_size="full"), "score", "column 'vocab_size', row 2"),
        (lambda f: pd.concat([f, f.iloc[:1]]), "score", "row 6 repeats a (cell, seed)"),
    ],
)
def test_correlate_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys, change, scores: str, message: str
) -> None:
    cells = tmp_path / "cells.csv"
    change(pd.DataFrame(BASE)).to_csv(cells, index=False)
    out = tmp_path / "out"
    assert main(["correlate", str(cells), "--scores", scores, "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error and error.startswith("tokstudy: error:")
    assert not out.exists()


def test_correlate_missing_file_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["correlate", str(tmp_path / "none.csv"), "--scores", "s"]) == 1
    assert "none.csv: no such file" in capsys.readouterr().err


def _study_files(tmp_path: Path) -> dict:
    metrics = []
    for tokenizer, size in itertools.product(("sp_bpe", "hft"), ("1000", "2000")):
        for split in ("train", "heldout"):
            metrics.append(("mr", tokenizer, size, split, "nu", len(tokenizer) + int(size) / 1000))
            metrics.append(("mr", tokenizer, size, split, "unk_rate", 0.0))
    metrics.append(("mr", "char", "full", "train", "nu", 1.0))
    metrics_csv = tmp_path / "metrics.csv"
    pd.DataFrame(
        metrics, columns=["language", "tokenizer", "vocab_size", "split", "metric", "value"]
    ).to_csv(metrics_csv, index=False)
    results = []
    for tokenizer, size in itertools.product(("sp_bpe", "hft", "characterbert"), (1000, 2000)):
        for seed in (0, 1):
            # sizes apart only in the 12th digit: a cells table written with fewer digits
            # would tie them, and its correlations would not be the workflow's
            accuracy = 0.5 + seed / 10 + size * 1e-12
            results.append(("pos", "mr", tokenizer, size, seed, 0, "accuracy", accuracy))
            results.append(("pos", "mr", tokenizer, size, seed, 20, "accuracy", 0.4 + seed))
            results.append(("mlm", "mr", tokenizer, size, seed, 0, "bits_per_char", size / 1e3))
            results.append(("mlm", "mr", tokenizer, size, seed, 0, "pseudo_perplexity", 9.0))
    # a character tokenizer: its data sets its size (written 57 here, "full" in metrics)
    for seed in (0, 1):
        results.append(("pos", "mr", "char", 57, seed, 0, "accuracy", 0.3))
    results_tsv = tmp_path / "results.tsv"
    pd.DataFrame(
        results,
        columns=["task", "language", "tokenizer", "vocab_size", "seed", "level", "metric", "value"],
    ).to_csv(results_tsv, sep="\t", index=False)
    nmt_metrics = tmp_path / "nmt_mr.tsv"
    pd.read_csv(metrics_csv).to_csv(nmt_metrics, sep="\t", index=False)
    scores = []
    for tokenizer, size, seed in itertools.product(("sp_bpe", "hft"), (1000, 2000), (1, 2)):
        path = tmp_path / f"{tokenizer}_{size}_{seed}.json"
        path.write_text(
            json.dumps(
                {
                    "direction": "en-mr",
                    "tokenizer": tokenizer,
                    "vocab_size": size,
                    "seed": seed,
                    "bleu": seed + size / 1e3,
                    "chrf": 30.0 + seed,
                }
            ),
            encoding="utf-8",
        )
        scores.append(path)
    return {
        "metrics_csv": metrics_csv,
        "metric_names": ["nu", "unk_rate"],
        "model_results": results_tsv,
        "nmt_score_files": scores,
        "nmt_metric_files": [nmt_metrics],
        "nmt_sides": {"en-mr": "mr"},
    }


def test_study_cells_keep_every_seed_and_say_what_was_left_out(tmp_path: Path) -> None:
    cells, notes = study_cells(**_study_files(tmp_path))
    assert study_scores(cells) == [
        "mlm_bits_per_char",
        "nmt_bleu",
        "nmt_chrf",
        "pos_accuracy",
        "pos_accuracy_noise20",
    ]
    assert list(cells.columns[:7]) == [
        "language",
        "tokenizer",
        "vocab_size",
        "seed",
        "family",
        "nu_heldout",
        "nu_train",
    ]
    # 2 tokenizers × 2 sizes × 2 seeds per scope, seeds kept apart
    assert len(cells[cells.language == "mr"]) == 8 and len(cells[cells.language == "en-mr"]) == 8
    model = cells[(cells.language == "mr") & (cells.tokenizer == "hft")]
    assert sorted(model["pos_accuracy"]) == pytest.approx([0.5, 0.5, 0.6, 0.6])
    nmt = cells[cells.language == "en-mr"].set_index(["tokenizer", "vocab_size", "seed"])
    assert nmt.loc[("hft", "2000", 2), "nmt_bleu"] == pytest.approx(4.0)
    assert nmt.loc[("hft", "2000", 2), "nu_train"] == pytest.approx(5.0)
    assert nmt["pos_accuracy"].isna().all()
    assert any("without intrinsic metrics left out: mr characterbert 1000" in n for n in notes)
    assert any("intrinsic unk_rate_train constant" in n for n in notes)
    assert (
        "2 row(s) of tokenizer(s) without a vocabulary size left out (size 'full': char)" in notes
    )
    assert "char" not in set(cells.tokenizer)
    assert "unk_rate_train" not in cells and "mlm_pseudo_perplexity" not in cells


def test_a_flagged_run_leaves_its_score_out_and_its_cell_in(tmp_path: Path) -> None:
    # hft's pos and mlm runs at 2000 with seed 1 are undertrained: their scores are empty,
    # the cell and seed keep their row and metrics; kept, the scores stay
    files = _study_files(tmp_path)
    results = pd.read_csv(files["model_results"], sep="\t")
    flags = [(task, "mr", "hft", 2000, 1, 0, "undertrained", 1.0) for task in ("pos", "mlm")]
    pd.concat([results, pd.DataFrame(flags, columns=results.columns)]).to_csv(
        files["model_results"], sep="\t", index=False
    )
    scores = ["pos_accuracy", "pos_accuracy_noise20", "mlm_bits_per_char"]
    for policy, expected in (("exclude", [np.nan] * 3), ("keep", [0.6, 1.4, 2.0])):
        cells, notes = study_cells(**files, flagged_runs=policy)
        row = cells.set_index(["language", "tokenizer", "vocab_size", "seed"])
        row = row.loc[("mr", "hft", "2000", 1)]
        assert row[scores].tolist() == pytest.approx(expected, nan_ok=True)
        assert row["nu_train"] == pytest.approx(5.0)
        assert len(cells[cells.language == "mr"]) == 8
        assert any("pos mr hft 2000 1 undertrained" in note for note in notes)
    # left out, the cell keeps seed 0's score: 4 cells with a score, one with one seed
    cells, _ = study_cells(**files, flagged_runs="exclude")
    settings = CorrelationSettings(bootstrap_samples=20, permutations=100)
    table = correlation_table(cells[cells.language == "mr"], ["pos_accuracy"], settings)
    row = table.set_index("intrinsic").loc["nu_train"]
    assert (row["n"], row["seeds"]) == (4, 1) and set(table["scope"]) == {"mr"}


def test_study_cells_run_through_the_command_code(tmp_path: Path) -> None:
    from tokstudy.analyses.correlation.run import correlation_analysis

    outputs = {name: tmp_path / file for name, file in OUTPUT_FILES.items()}
    outputs |= {
        "png": tmp_path / "c.png",
        "cells": tmp_path / "cells.csv",
        "cells_json": tmp_path / "cells.json",
        "sensitivity_csv": tmp_path / "sensitivity.csv",
        "sensitivity_markdown": tmp_path / "sensitivity.md",
    }
    result = correlation_analysis(
        **_study_files(tmp_path),
        settings=CorrelationSettings(bootstrap_samples=20),
        outputs=outputs,
    )
    assert set(result.table["scope"]) == {"mr", "en-mr"}
    assert json.loads(outputs["cells_json"].read_text("utf-8"))["rows"] == 16
    # no run is flagged here: each row of the tables (correlation and family) once per
    # policy, with the same verdicts under both
    sensitivity_rows = pd.read_csv(outputs["sensitivity_csv"])
    by_policy = dict(tuple(sensitivity_rows.groupby("flagged_runs")))
    assert sorted(by_policy) == ["exclude", "keep"]
    first, second = (
        part.drop(columns="flagged_runs").reset_index(drop=True) for part in by_policy.values()
    )
    assert len(first) == len(result.table) + len(result.family)
    pd.testing.assert_frame_equal(first, second)
    assert "both policies give the same tables" in outputs["sensitivity_markdown"].read_text(
        "utf-8"
    )
    again = main(
        [
            "correlate",
            str(outputs["cells"]),
            "--scores",
            "mlm_bits_per_char,nmt_bleu,nmt_chrf,pos_accuracy,pos_accuracy_noise20",
            "--bootstrap-samples",
            "20",
            "--out",
            str(tmp_path / "cli"),
        ]
    )
    assert again == 0
    cli = pd.read_csv(tmp_path / "cli" / "correlation.csv")
    pd.testing.assert_frame_equal(cli, pd.read_csv(outputs["csv"]))
    assert "Kauf & Ivanova 2023" in outputs["markdown"].read_text("utf-8")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bootstrap_samples": 0}, "analyses.correlation.bootstrap_samples must be >= 1"),
        ({"confidence": 1.0}, "analyses.correlation.confidence must be in"),
        ({"nmt_side": "both"}, "analyses.correlation.nmt_side must be one of target, source"),
        ({"plot_split": "dev"}, "analyses.correlation.plot_split must be one of train, heldout"),
    ],
)
def test_bad_settings_are_one_line_errors(changes: dict, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        CorrelationSettings(**changes)


def _study(**sections: object) -> dict:
    return {
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"sp_bpe": {"vocab_sizes": [300]}},
        "metrics": ["mu"],
        **sections,
    }


def test_correlation_is_on_with_a_downstream_stage_and_can_be_turned_off() -> None:
    assert StudyPlan(Study(_study())).analyses["correlation"].settings() is None
    assert StudyPlan(Study(_study(nmt={}))).analyses["correlation"].settings() == {}
    tuned = {"analyses": {"correlation": {"permutations": 99}}, "nmt": {}}
    assert StudyPlan(Study(_study(**tuned))).analyses["correlation"].settings() == {
        "permutations": 99
    }
    turned_off = StudyPlan(Study(_study(nmt={}, analyses={"correlation": False})))
    assert turned_off.analyses["correlation"].settings() is None
    with pytest.raises(TokstudyError, match=r"analyses\.correlation: the study has no downstream"):
        StudyPlan(Study(_study(analyses={"correlation": {"seed": 1}})))


def correlation_study(workdir: Path) -> Path:
    """A tiny study with both downstream stages: 2 tokenizers × 2 sizes, a few steps."""
    tokenizers = ["hf_wordpiece", "sp_unigram"]
    config = {
        "seed": 3,
        "languages": {"de": {"chatterbot": "german"}},
        "vocab_sizes": [250, 300],
        "tokenizers": {name: {} for name in tokenizers},
        "metrics": ["mu", "nu"],
        "models": {
            "languages": ["de"],
            "tokenizers": tokenizers,
            "vocab_sizes": [250, 300],
            "seeds": [0],
            "tasks": ["mlm"],
            **{k: v for k, v in TINY_TRAINING.items() if k != "finetune"},
        },
        "nmt": {
            "languages": ["en", "mr"],
            "directions": ["en-mr"],
            "corpus": {"builtin": "cldr"},
            "tokenizers": tokenizers,
            "vocab_sizes": [250, 300],
            "seeds": [1],
            "split": {"dev_size": 20, "test_size": 20},
            "train": {"max_steps": 4, "eval_every": 4, "warmup_steps": 2, "max_tokens": 512},
            "decode": {"beam_size": 1},
            "evaluation": {"baseline": "sp_unigram", "bootstrap_samples": 10},
        },
        # a BERT of a few steps is undertrained: kept here, so that its scores are correlated
        "analyses": {
            "correlation": {"bootstrap_samples": 50, "permutations": 50, "flagged_runs": "keep"}
        },
        "resources": {"nmt_train": {"threads": 1}, "pretrain_mlm": {"threads": 1}},
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.slow
def test_tiny_study_writes_the_correlation_tables_and_plot(tmp_path: Path) -> None:
    result = snakemake(
        tmp_path, "--cores", "2", "correlation_outputs", config=correlation_study(tmp_path)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    table = pd.read_csv(results / "tables/analysis/correlation.csv")
    # mlm scores exist for de only, NMT scores for en-mr only: no pooled rows
    assert set(table.scope) == {"de", "en-mr"}
    expected = {"nmt_bleu", "nmt_chrf", "mlm_bits_per_char", "mlm_pll_per_word"}
    # a score constant over every cell (BLEU of a 4-step model can be 0 everywhere) is
    # left out, and the cells' JSON says so
    left_out = json.loads((results / "tables/analysis/correlation_cells.json").read_text())
    for score in expected - set(table.score):
        assert f"score {score} constant or empty over every cell: left out" in left_out["left_out"]
    # the undertrained BERTs are kept (flagged_runs: keep) and named
    model_results = pd.read_csv(results / "tables/models/results.tsv", sep="\t")
    undertrained = model_results.query("level == 0 and metric == 'undertrained' and value == 1")
    kept = [note for note in left_out["left_out"] if "flagged run(s) kept" in note]
    assert len(kept) == (1 if len(undertrained) else 0)
    assert all(kept[0].count(" undertrained") == len(undertrained) for _ in kept)
    assert set(table.score) <= expected and {"mlm_bits_per_char", "nmt_chrf"} <= set(table.score)
    assert set(table.intrinsic) <= {"mu_train", "mu_heldout", "nu_train", "nu_heldout"}
    assert (table["n"] <= 4).all()  # 2 tokenizers × 2 sizes per scope
    # 2 tokenizers: 2! = 2 relabellings, the floor 2/2 = 1: no p at all
    assert (table["min_attainable_p"].dropna() == 1.0).all() and table["p_within_size"].isna().all()
    cells = pd.read_csv(results / "tables/analysis/correlation_cells.csv")
    assert len(cells) == 8  # 4 cells × one seed, in two scopes
    ranked = pd.read_csv(results / "tables/analysis/correlation_ranking.csv")
    assert ranked.groupby(["score", "scope"])["rank"].min().eq(1).all()
    markdown = (results / "tables/analysis/correlation.md").read_text("utf-8")
    assert "Kauf & Ivanova 2023" in markdown
    # crossed tokenizer and family intercepts in every scope; 2 tokenizers are too few
    mixed = pd.read_csv(results / "tables/analysis/correlation_mixed.csv")
    assert set(mixed["random_effect"]) == {"tokenizer + family"} and set(mixed["groups"]) == {2}
    assert mixed["note"].str.startswith("not fitted").all()
    # one tokenizer per family: nothing within families, the two families across
    family = pd.read_csv(results / "tables/analysis/correlation_family.csv")
    assert set(family["level"]) == {"across_family"}
    # no primary metric declared: nothing compared; each verdict under both run policies
    comparison = (results / "tables/analysis/correlation_comparison.md").read_text("utf-8")
    assert "No primary metric was declared" in comparison
    both = pd.read_csv(results / "tables/analysis/correlation_sensitivity.csv")
    assert set(both["flagged_runs"]) == {"keep", "exclude"}
    assert (both["flagged_runs"] == "keep").sum() == len(table) + len(family)
    assert set(cells["family"]) == {"wordpiece", "unigram"}
    assert (results / "plots/analysis/correlation.png").stat().st_size > 5000
    nmt_metrics = pd.read_csv(results / "nmt/metrics/mr/sp_unigram/300.tsv", sep="\t")
    assert set(nmt_metrics["split"]) == {"train", "heldout"}
    assert "correlation_analysis: finished" in (results / "logs/correlation.log").read_text("utf-8")


def test_model_scores_come_from_the_task_registry_one_column_per_scale() -> None:
    from tokstudy.analyses.correlation.cells import (
        DOWNSTREAM_METRICS,
        model_score_columns,
        score_note,
        score_task,
    )
    from tokstudy.models.task_registry import TASKS

    # every task with scores is correlated, with the metrics the registry lists
    assert DOWNSTREAM_METRICS["clm"] == ("bits_per_byte", "unigram_bits_per_byte")
    assert {t for t in TASKS if TASKS[t].scores} <= set(DOWNSTREAM_METRICS)
    row = {"language": "xx", "tokenizer": "sp_bpe", "vocab_size": 1000, "seed": 0, "level": 0}
    results = pd.DataFrame(
        [
            {**row, "task": "clm", "metric": "bits_per_byte", "value": 1.5, "scale": "tiny"},
            {**row, "task": "clm", "metric": "bits_per_byte", "value": 1.4, "scale": "small"},
            {**row, "task": "pos", "metric": "accuracy", "value": 0.9, "scale": np.nan},
            {**row, "task": "pos", "metric": "loss", "value": 9.0, "scale": np.nan},  # not a score
        ]
    )
    wide = model_score_columns(results)
    # two scales are two columns: neither value is dropped
    assert wide.loc[0, "clm_bits_per_byte_tiny"] == 1.5
    assert wide.loc[0, "clm_bits_per_byte_small"] == 1.4
    assert wide.loc[0, "pos_accuracy"] == 0.9
    assert "pos_loss" not in wide.columns
    assert score_task("clm_bits_per_byte_small") == "clm"
    assert score_task("mlm_bits_per_char_noise20") == "mlm"
    assert (
        "Kauf & Ivanova" in score_note("mlm_pll_per_word")
        and score_note("clm_bits_per_byte_tiny") == ""
    )


def test_the_primary_is_compared_with_each_other_metric_on_the_same_resamples() -> None:
    metrics = {
        "signal": lambda s, q, r: np.log(s) + q,
        "weak": lambda s, q, r: np.log(s) + q + r.normal(0, 2),
        "reversed": lambda s, q, r: -np.log(s) - q,
    }
    rows = _grid(
        np.random.default_rng(8), metrics, lambda s, q, r: np.log(s) + q + r.normal(0, 0.2)
    )
    cells = _cells(rows, ["score"])
    settings = CorrelationSettings(bootstrap_samples=300, permutations=2000, primary="signal")
    comparison = comparison_table(cells, ["score"], settings).set_index("other")
    table = correlation_table(cells, ["score"], settings).set_index("intrinsic")
    rho = table["partial_spearman"]
    # oracle: the oriented difference from the analysis's own estimates, by hand
    weak = comparison.loc["weak"]
    assert weak["difference"] == pytest.approx(abs(rho["signal"]) - abs(rho["weak"]))
    assert weak["primary_rho"] == pytest.approx(rho["signal"]) and weak["units"] == 7
    assert weak["low"] <= weak["difference"] <= weak["high"] and weak["low"] > 0
    # a metric as strong as the primary in the other direction is not "worse": 0 difference
    same = comparison.loc["reversed"]
    assert same["other_rho"] == pytest.approx(-rho["signal"])
    assert same["difference"] == pytest.approx(0) and same["p"] == pytest.approx(1)
    # Holm over the two comparisons: the smaller p doubled
    assert weak["p_adjusted"] == pytest.approx(min(1, 2 * weak["p"]))
    assert comparison_table(cells, ["score"], FAST).empty  # no primary, nothing compared


COMPARED = ["score", "scope", "level", "primary", "other", "n", "units", "primary_rho"]
COMPARED += ["other_rho", "difference", "low", "high", "p", "p_adjusted", "note"]


def _mean_stratum_spearman(scope: pd.DataFrame, metric: str) -> float:
    """Equal strata without ties: the pooled within-stratum ρ is their Spearman ρs' mean."""
    strata = scope.groupby(["language", "vocab_size"])
    return float(np.mean([stats.spearmanr(s[metric], s["score"])[0] for _, s in strata]))


def test_each_scope_compares_the_primary_on_the_cells_that_have_both_metrics() -> None:
    four = {("a", 1000), ("b", 1000), ("c", 1000), ("d", 1000)}  # 4 cells: just enough
    metrics = {
        "signal": lambda s, q, r: -np.log(s) - q,  # negative: oriented by its sign
        "weak": lambda s, q, r: q + r.normal(0, 2),
        "flat": lambda s, q, r: np.log(s),  # no variation within a size
        "gappy": lambda s, q, r: q + r.normal(),
    }
    rows = _grid(np.random.default_rng(4), metrics, lambda s, q, r: q + r.normal(0, 0.3),
                 languages=("xx", "yy"), seeds=(0,))  # fmt: skip
    for row in rows:
        key = (row["tokenizer"], row["vocab_size"])
        in_xx = row["language"] == "xx"
        row["gappy"] = np.nan if in_xx and row["tokenizer"] == "a" else row["gappy"]
        row["four"] = row["weak"] if in_xx and key in four else np.nan
        row["three"] = row["weak"] if in_xx and key in four and key[0] != "d" else np.nan
    cells = _cells(rows, ["score"])
    settings = CorrelationSettings(bootstrap_samples=100, permutations=100, primary="signal")
    table = comparison_table(cells, ["score"], settings)
    assert list(table.columns) == COMPARED
    assert set(table["level"]) == {"cell"} and set(table["primary"]) == {"signal"}
    assert set(table["score"]) == {"score"}
    compared = table.set_index(["scope", "other"])
    others = ["flat", "four", "gappy", "three", "weak"]
    assert sorted(compared.index) == sorted(itertools.product(["pooled", "xx", "yy"], others))
    frame = pd.DataFrame(rows)
    for scope in ("xx", "yy"):
        part = frame[frame["language"] == scope]
        weak = compared.loc[(scope, "weak")]
        signal_rho = _mean_stratum_spearman(part, "signal")
        assert weak["primary_rho"] == pytest.approx(signal_rho) and signal_rho < 0
        expected = abs(signal_rho) - abs(_mean_stratum_spearman(part, "weak"))
        assert weak["difference"] == pytest.approx(expected)
        assert weak["n"] == 21 and weak["units"] == 7 and weak["note"] == ""
        flat = compared.loc[(scope, "flat")]
        assert flat["note"] == "no variation within a size: undefined"
        assert np.isnan(flat["difference"]) and np.isnan(flat["p"])
    assert compared.loc[("xx", "gappy"), "n"] == 18  # tokenizer a has no gappy value in xx
    assert compared.loc[("yy", "gappy"), "n"] == 21
    assert compared.loc[("pooled", "gappy"), "n"] == 39
    four = compared.loc[("xx", "four")]
    assert four["n"] == 4 and not np.isnan(four["difference"]) and four["p"] <= 1
    # 4 tokenizers: a resample that draws one tokenizer 4 times (1 in 64) has no ρ
    undefined = re.fullmatch(r"(\d+) undefined resamples left out", four["note"])
    assert undefined and 0 < int(undefined[1]) < 20
    assert compared.loc[("xx", "three"), "note"] == "3 cells < 4: not computed"
    assert compared.loc[("yy", "three"), "note"] == "0 cells < 4: not computed"
    assert np.isnan(compared.loc[("yy", "three"), "p_adjusted"])
    # a primary that is not one of the table's metrics: nothing compared, the columns kept
    absent = CorrelationSettings(bootstrap_samples=10, permutations=10, primary="absent")
    empty = comparison_table(cells, ["score"], absent)
    assert empty.empty and list(empty.columns) == COMPARED


def test_within_families_a_scope_without_families_is_skipped_and_notes_are_joined() -> None:
    # xx has two families of 2 (left out: nothing left); yy one family of 4
    members = {"xx": ["p1", "p2", "q1", "q2"], "yy": ["r1", "r2", "r3", "r4"]}
    rows = [
        {"language": language, "tokenizer": t, "family": t[0], "vocab_size": size,
         "seed": seed, "primary": i + size / 1000, "other": (i * 7) % 4 + seed,
         "scarce": float(i) if (t, size) in {("r1", 1000), ("r2", 1000), ("r3", 1000)} else np.nan,
         "score": i + 0.1 * seed}
        for language, names in members.items()
        for i, t in enumerate(names)
        for size in (1000, 2000)
        for seed in (0, 1)
    ]  # fmt: skip
    cells = check_cells(pd.DataFrame(rows).astype(str), ["score"], "t", study_table=True)
    settings = CorrelationSettings(bootstrap_samples=50, permutations=100, primary="primary")
    table = comparison_table(cells, ["score"], settings, "within_family")
    assert list(table["scope"]) == ["yy", "yy", "pooled", "pooled"]
    tested = correlation_table(cells, ["score"], settings, "within_family")
    assert list(tested["scope"]) == ["yy"] * 3 + ["pooled"] * 3  # xx: nothing left
    assert set(table["level"]) == {"within_family"}
    pooled = table[table["scope"] == "pooled"].set_index("other")
    left_out = "families of fewer than 3 tokenizers left out: p (2), q (2)"
    assert pooled.loc["scarce", "note"] == f"{left_out}; 3 cells < 4: not computed"
    scarce = tested.set_index(["scope", "intrinsic"]).loc[("pooled", "scarce"), "note"]
    assert scarce == f"{left_out}; 3 cells < 4: not computed"
    assert pooled.loc["other", "note"].startswith(left_out)
    assert table[table["scope"] == "yy"].set_index("other").loc["other", "n"] == 8


def test_every_verdict_is_given_under_both_policies_for_flagged_runs() -> None:
    def rows(low: float, high: float, p: float) -> pd.DataFrame:
        return pd.DataFrame(
            [{"score": "s", "intrinsic": "m", "scope": "xx", "level": "cell", "n": 9,
              "units": 7, "partial_spearman": (low + high) / 2, "partial_low": low,
              "partial_high": high, "p_adjusted": p}]
        )  # fmt: skip

    empty = pd.DataFrame(columns=COLUMNS)
    kept = Correlations(rows(0.2, 0.8, 0.01), empty, empty, empty, empty)
    left_out = Correlations(rows(-0.1, 0.7, 0.2), empty, empty, empty, empty)
    table = sensitivity({"keep": kept, "exclude": left_out})
    assert list(table["flagged_runs"]) == ["keep", "exclude"]
    assert list(table["called"]) == [True, False]
    markdown = sensitivity_markdown(table, "keep", same=False)
    last = markdown.strip().splitlines()[-1]
    assert [cell.strip() for cell in last.strip("|").split("|")][-1] == "**no**"
    assert "No run was flagged" in sensitivity_markdown(table, "keep", same=True)


def test_pooled_only_on_one_language_is_that_language_s_row() -> None:
    # scripts/planted_designs.py --languages en asks for the pooled scope of a one-language
    # design: there is none, and the language's own row stands for it
    rng = np.random.default_rng(5)
    rows = _grid(rng, {"m": lambda s, q, r: q + r.normal(0, 0.3)}, lambda s, q, r: q)
    cells = _cells(rows, ["score"])
    every = correlation_table(cells, ["score"], FAST)
    alone = correlation_table(cells, ["score"], FAST, pooled_only=True)
    assert list(every["scope"]) == ["xx"]
    pd.testing.assert_frame_equal(alone, every)
    two = _cells(_grid(rng, {"m": lambda s, q, r: q}, lambda s, q, r: q, ("xx", "yy")), ["score"])
    assert list(correlation_table(two, ["score"], FAST, pooled_only=True)["scope"]) == ["pooled"]


def test_the_mixed_model_gets_cell_means_size_and_language_and_names_its_gaps(monkeypatch) -> None:
    # the model itself is tested against statsmodels (test_statistics*.py); here, what the
    # table hands it and what it does with the answer, recorded by a stand-in
    calls = []

    def recorded(data, outcome, predictor, covariates, groups, confidence):
        calls.append((data.copy(), outcome, predictor, list(covariates), list(groups)))
        return Coefficient(0.5, 0.1, 0.9, 0.02, "fit note")

    monkeypatch.setattr(correlation_module, "mixed_coefficient", recorded)
    rows = [
        {"language": language, "tokenizer": t, "family": "f", "vocab_size": size,
         "seed": seed, "metric": 100 + i + size / 1000 + 10 * (language == "zz"),
         "two_values": i % 2, "flat": 1.0 if language == "xx" else i,
         "sparse": i if i < 2 else np.nan,
         "score": i * 0.5 + seed}
        for language in ("xx", "yy", "zz")
        for i, t in enumerate("abcd" if language == "yy" else "abc")
        for size in ((1000,) if language == "yy" else (1000, 2000))
        for seed in (0, 1)
    ]  # fmt: skip
    cells = check_cells(pd.DataFrame(rows).astype(str), ["score"], "t", study_table=True)
    mixed = mixed_table(cells, ["score"], FAST)
    assert list(mixed.columns) == [
        "score", "intrinsic", "scope", "random_effect", "n", "groups", "coefficient",
        "low", "high", "p", "note",
    ]  # fmt: skip
    table = mixed.set_index(["scope", "intrinsic"])
    assert set(mixed["score"]) == {"score"} and set(mixed["random_effect"]) == {
        "tokenizer + family"
    }
    fitted = table.loc[("pooled", "metric")]
    assert (fitted["coefficient"], fitted["low"], fitted["high"]) == (0.5, 0.1, 0.9)
    assert (fitted["p"], fitted["note"], fitted["n"], fitted["groups"]) == (0.02, "fit note", 16, 4)
    # 2 distinct values and 3 tokenizers are enough; a constant or 2 tokenizers are not
    assert table.loc[("xx", "two_values"), "note"] == "fit note"
    not_fitted = "not fitted: fewer than 3 tokenizers, too few cells, or a constant"
    assert table.loc[("xx", "flat"), "note"] == not_fitted
    assert table.loc[("pooled", "sparse"), "note"] == not_fitted  # 2 tokenizers, 10 cells
    assert table.loc[("yy", "metric"), "note"] == "fit note"  # 4 cells: enough
    # the calls for "metric" (the only column above 100), by the languages they hold
    by_scope = {
        "/".join(sorted(set(call[0]["language"]))): call
        for call in calls
        if call[0]["metric"].min() > 100
    }
    data, outcome, predictor, covariates, groups = by_scope["xx/yy/zz"]
    assert (outcome, predictor, groups) == ("outcome", "metric", ["tokenizer", "family"])
    # pooled: log size, then one indicator per language but the first (sorted)
    assert covariates == ["log_size", "language_0", "language_1"]
    assert list(data["language_0"]) == list((data["language"] == "yy").astype(float))
    assert list(data["language_1"]) == list((data["language"] == "zz").astype(float))
    # the cells' means over seeds, one row per cell
    first = data[(data["language"] == "xx") & (data["tokenizer"] == "b")]
    assert sorted(first["outcome"]) == [1.0, 1.0] and sorted(first["metric"]) == [102.0, 103.0]
    assert np.allclose(sorted(set(data["log_size"])), np.log([1000, 2000]))
    # one size in a scope: no size covariate
    assert by_scope["yy"][3] == [] and len(by_scope["yy"][0]) == 4
    assert by_scope["xx"][3] == ["log_size"] and by_scope["xx"][4] == ["tokenizer", "family"]


def test_unit_products_give_the_within_size_rho_of_every_relabelling() -> None:
    # 4 tokenizers in 3 sizes; tokenizer d lacks the last size. Oracle: relabel the
    # scores' tokenizers by hand in every size, then Spearman ρ within sizes, pooled
    rng = np.random.default_rng(5)
    cells = [(t, s) for t in "abcd" for s in (0, 1, 2) if (t, s) != ("d", 2)]
    x, y = rng.normal(size=len(cells)), rng.normal(size=len(cells))
    strata = np.array([str(s) for _, s in cells])
    clusters = [np.array([i for i, c in enumerate(cells) if c[0] == t]) for t in "abcd"]
    units = Units(clusters, ["same"] * 4)
    ranked_x, ranked_y = within_strata_ranks(x, strata), within_strata_ranks(y, strata)
    products = unit_products(ranked_x, ranked_y, strata, units)
    for order in itertools.permutations(range(3)):  # d keeps its label: it lacks a size
        relabel = dict(zip("abc", ("abc"[i] for i in order), strict=True)) | {"d": "d"}
        moved_y = np.array([y[cells.index((relabel[t], s))] for t, s in cells])
        ranks_y = within_strata_ranks(moved_y, strata)
        expected = ranked_x @ ranks_y / np.sqrt((ranked_x @ ranked_x) * (ranks_y @ ranks_y))
        assert products[np.arange(4), [*order, 3]].sum() == pytest.approx(expected)
    one = strata == "0"  # one stratum alone: the trace is Spearman's ρ
    single = Units([np.array([i]) for i in range(4)], ["b"] * 4)
    alone = unit_products(ranked_x[one], ranked_y[one], strata[one], single)
    assert np.trace(alone) == pytest.approx(stats.spearmanr(x[one], y[one])[0])


def test_a_monte_carlo_p_is_the_same_for_the_same_seed() -> None:
    # 8 tokenizers: 8! orderings, more than drawn; the draws follow the settings' seed
    rows = _grid(np.random.default_rng(6), {"metric": lambda s, q, r: q + r.normal()},
                 lambda s, q, r: q + r.normal(), tokenizers=8)  # fmt: skip
    cells = _cells(rows, ["score"])

    def p(seed: int) -> float:
        settings = CorrelationSettings(bootstrap_samples=10, permutations=300, seed=seed)
        (row,) = correlation_table(cells, ["score"], settings).itertuples()
        assert row.p_method == "monte_carlo"
        return row.p_within_size

    assert p(1) == p(1) and p(1) != p(2)


def test_each_scope_says_why_a_metric_has_no_estimate_and_counts_its_units() -> None:
    # xx: 5 tokenizers × 2 sizes, but e lacks 2000 (still exchanged: its gap moves with it);
    # in xx "flat" is the size alone, "same" one value; in yy the score is one value
    rows = []
    for language in ("xx", "yy"):
        for i, tokenizer in enumerate("abcde"):
            for size in (1000, 2000):
                if (language, tokenizer, size) == ("xx", "e", 2000):
                    continue
                for seed in (0, 1) if tokenizer != "a" else (0,):
                    rows.append(
                        {"language": language, "tokenizer": tokenizer, "vocab_size": size,
                         "seed": seed, "metric": (i * 3) % 5 + size / 1000,
                         "flat": size if language == "xx" else i,
                         "same": 1.0 if language == "xx" else i,
                         "score": 7.0 if language == "yy" else i + size / 1000 + seed}
                    )  # fmt: skip
    settings = CorrelationSettings(bootstrap_samples=50, permutations=100, seed=0)
    table = correlation_table(_cells(rows, ["score"]), ["score"], settings)
    assert set(table["level"]) == {"cell"}
    assert table["primary"].dtype == bool and str(table["permutations"].dtype) == "Int64"
    rows_by = table.set_index(["scope", "intrinsic"])
    xx = rows_by.loc[("xx", "metric")]
    assert (xx["n"], xx["units"], xx["seeds"]) == (9, 5, 1)  # a has one seed
    cell_means = pd.DataFrame(rows).query("language == 'xx'")
    cell_means = cell_means.groupby(["tokenizer", "vocab_size"], as_index=False)["score"].mean()
    expected = stats.spearmanr(np.log(cell_means["vocab_size"]), cell_means["score"])[0]
    assert xx["size_spearman"] == pytest.approx(expected)
    flat = rows_by.loc[("xx", "flat")]
    # no resample has variation within a size either: all 50 left out
    assert flat["note"] == (
        "50 undefined partial bootstrap resamples left out; "
        "no variation within a size: within-size test undefined"
    )
    assert np.isnan(flat["p_within_size"]) and not np.isnan(flat["spearman"])
    assert rows_by.loc[("xx", "same"), "note"] == "intrinsic constant over the cells: undefined"
    assert rows_by.loc[("yy", "same"), "note"] == "score constant over the cells: undefined"
    yy = rows_by.loc[("yy", "metric")]
    assert yy["note"] == "score constant over the cells: undefined" and yy["units"] == 5
    one_size = correlation_table(
        _cells([row for row in rows if row["vocab_size"] == 1000], ["score"]), ["score"], settings
    )
    assert one_size[["size_spearman", "size_low", "size_high"]].isna().all().all()


def _relabelling_design(missing: bool):
    """Five tokenizers at two sizes (strata), one block; when ``missing``, an association,
    the last one's score at the second size missing, the fourth one's metric there missing
    beside its score, two metrics tied there and two tied at the first size (no gap)."""
    random = np.random.default_rng(11)
    x, y = random.normal(size=10), random.normal(size=10)
    if missing:
        y += x  # an association: the p neither 1 nor the floor
        y[9], x[7], x[3], x[2] = np.nan, np.nan, x[1], x[0]
    strata = np.array(["1000", "2000"] * 5)
    units = Units([np.array([2 * u, 2 * u + 1]) for u in range(5)], ["b"] * 5)
    return x, y, strata, units


def test_a_relabelling_test_without_missing_scores_is_the_unit_product_test():
    x, y, strata, units = _relabelling_design(missing=False)
    products = unit_products(within_strata_ranks(x, strata), within_strata_ranks(y, strata),
                             strata, units)  # fmt: skip
    for draws in (1000, 50):  # exact (120 orderings), then Monte Carlo
        ours = relabelling_test(x, y, strata, units, n_resamples=draws, seed=4)
        theirs = unit_permutation_test(products, units.blocks, n_resamples=draws, seed=4)
        assert ours.pvalue == pytest.approx(theirs.pvalue)
        assert ours.statistic == pytest.approx(theirs.statistic)


def _brute_force(
    x: np.ndarray, y: np.ndarray, width: int, blocks: tuple[int, ...] = ()
) -> tuple[float, float]:
    """ρ within strata and its two-sided p over every relabelling of the tokenizers within
    their blocks (``blocks``: how many tokenizers each holds, in order; one block by
    default; tokenizer ``u`` holds cells ``u·width … u·width + width − 1``, stratum = place
    and block): the scores (NaN included) moved by hand, each stratum's ranks taken by
    scipy on the pairs present, pooled by hand."""
    blocks = blocks or (len(x) // width,)
    starts = np.cumsum((0, *blocks))[:-1]

    def pooled(scores: np.ndarray) -> float:
        numerator = denominator_x = denominator_y = 0.0
        for start, size in zip(starts, blocks, strict=True):
            for place in range(width):
                cells = (start + np.arange(size)) * width + place
                present = cells[~np.isnan(scores[cells]) & ~np.isnan(x[cells])]
                rx = stats.rankdata(x[present]) - (len(present) + 1) / 2
                ry = stats.rankdata(scores[present]) - (len(present) + 1) / 2
                numerator += rx @ ry
                denominator_x, denominator_y = denominator_x + rx @ rx, denominator_y + ry @ ry
        return numerator / np.sqrt(denominator_x * denominator_y)

    null = []
    within = [itertools.permutations(range(s, s + n)) for s, n in zip(starts, blocks, strict=True)]
    for orders in itertools.product(*within):
        order = [source for block in orders for source in block]
        moved = np.concatenate([y[source * width : (source + 1) * width] for source in order])
        null.append(pooled(moved))
    null, observed = np.array(null), pooled(y)
    less, greater = np.mean(null <= observed + 1e-12), np.mean(null >= observed - 1e-12)
    return observed, min(1, 2 * min(less, greater))


def test_a_missing_score_moves_with_its_tokenizer_by_brute_force():
    x, y, strata, units = _relabelling_design(missing=True)
    observed, expected = _brute_force(x, y, 2)
    result = relabelling_test(x, y, strata, units, n_resamples=1000, seed=0)
    assert result.statistic == pytest.approx(observed)
    assert result.pvalue == pytest.approx(expected) and 2 / 120 < expected < 1


def test_a_drawn_relabelling_p_with_a_missing_score_follows_its_seed():
    x, y, strata, units = _relabelling_design(missing=True)
    drawn = [
        relabelling_test(x, y, strata, units, n_resamples=30, seed=seed) for seed in (0, 1, 2, 3)
    ]
    again = [
        relabelling_test(x, y, strata, units, n_resamples=30, seed=seed) for seed in (0, 1, 2, 3)
    ]
    assert not any(result.exact for result in drawn)  # 30 of the 120 orderings
    assert [r.pvalue for r in drawn] == [r.pvalue for r in again]
    assert len({r.pvalue for r in drawn}) > 1  # the seeds draw different orderings


def test_a_tokenizer_missing_a_cell_or_a_score_stays_in_its_family_s_block():
    # one family of 5 tokenizers at 3 sizes: d has no cell at 4000 (no metric, no score),
    # e's run at 4000 was left out (metric, no score); both are still relabelled with the
    # other three: 5! = 120 orderings, exact. Split into blocks by the sizes they have,
    # there would be 2!·3! = 12 orderings and no p (floor 1/6)
    random = np.random.default_rng(3)
    x, y = random.normal(size=15), random.normal(size=15)
    y += x / 2  # an association, its p neither 1 nor the floor
    x[11], y[11], y[14] = np.nan, np.nan, np.nan
    rows = [
        {"language": "xx", "tokenizer": name, "vocab_size": size, "seed": 0, "family": "bpe",
         "metric": x[3 * u + k], "score": y[3 * u + k]}
        for u, name in enumerate("abcde") for k, size in enumerate((1000, 2000, 4000))
        if (name, size) != ("d", 4000)
    ]  # fmt: skip
    # a family of 3 whose third tokenizer has no score at all: 2 scored, left out
    rows += [
        {"language": "xx", "tokenizer": name, "vocab_size": size, "seed": 0, "family": "uni",
         "metric": u + size, "score": np.nan if name == "w" else u * size}
        for u, name in enumerate("uvw") for size in (1000, 2000, 4000)
    ]  # fmt: skip
    cells = check_cells(pd.DataFrame(rows), ["score"], "test cells")
    settings = CorrelationSettings(bootstrap_samples=50, permutations=1000, seed=0)
    (row,) = correlation_table(cells, ["score"], settings, "within_family").itertuples()
    observed, expected = _brute_force(x, y, 3)
    assert (row.n, row.units, row.p_method, row.permutations) == (13, 5, "exact", 120)
    assert row.note == "families of fewer than 3 tokenizers left out: uni (2)"
    assert row.partial_spearman == pytest.approx(observed)
    assert row.p_within_size == pytest.approx(expected) and 2 / 120 < expected < 0.5
    # the mixed model is fitted on the cells with a score (13 of bpe, 6 of uni)
    assert mixed_table(cells, ["score"], settings).loc[0, "n"] == 19


def test_a_tokenizer_missing_a_cell_is_ranked_within_its_own_family():
    # two families, bpe (a–e, d without a cell at 4000) and uni (u, v, w): the completed
    # scope still ranks within size and family and relabels within each family,
    # 5!·3! = 720 orderings, exact, by brute force with both blocks
    random = np.random.default_rng(5)
    x, y = random.normal(size=24), random.normal(size=24)
    y += x / 2
    y[:15] += 3 * np.repeat(np.arange(5) % 2, 3)  # b, d lifted: ranks across families differ
    x[11], y[11] = np.nan, np.nan
    rows = [
        {"language": "xx", "tokenizer": name, "vocab_size": size, "seed": 0,
         "family": "bpe" if u < 5 else "uni", "metric": x[3 * u + k], "score": y[3 * u + k]}
        for u, name in enumerate("abcdeuvw") for k, size in enumerate((1000, 2000, 4000))
        if (name, size) != ("d", 4000)
    ]  # fmt: skip
    cells = check_cells(pd.DataFrame(rows), ["score"], "test cells")
    settings = CorrelationSettings(bootstrap_samples=50, permutations=1000, seed=0)
    (row,) = correlation_table(cells, ["score"], settings, "within_family").itertuples()
    observed, expected = _brute_force(x, y, 3, blocks=(5, 3))
    assert (row.n, row.units, row.p_method, row.permutations) == (23, 8, "exact", 720)
    assert row.partial_spearman == pytest.approx(observed)
    assert row.p_within_size == pytest.approx(expected) and 2 / 720 < expected < 0.5
