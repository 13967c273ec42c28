"""Model stage: metrics and statistics against hand values and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from tokstudy.models.classification_scores import accuracy, bootstrap_ci, bootstrap_table, macro_f1
from tokstudy.models.study_tables import read_tables, summarize
from tokstudy.statistics.significance import seed_summary, wilcoxon_table


def test_accuracy_and_macro_f1_by_hand():
    gold = ["N", "N", "V", "V", "A"]
    pred = ["N", "V", "V", "V", "N"]
    assert accuracy(gold, pred) == pytest.approx(3 / 5)
    # N: tp1 fp1 fn1 → 0.5; V: tp2 fp1 fn0 → 0.8; A: tp0 fp0 fn1 → 0
    assert macro_f1(gold, pred) == pytest.approx((0.5 + 0.8 + 0.0) / 3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abcd")), min_size=1))
def test_macro_f1_bounds(pairs):
    gold, pred = zip(*pairs, strict=True)
    score = macro_f1(gold, pred)
    assert 0.0 <= score <= 1.0
    assert (score == 1.0) == (list(gold) == list(pred))


def test_seed_summary_against_numpy():
    frame = pd.DataFrame(
        {
            "tokenizer": ["bpe"] * 3 + ["char"] * 3,
            "seed": [0, 1, 2] * 2,
            "value": [0.8, 0.82, 0.87, 0.7, 0.71, 0.69],
        }
    )
    table = seed_summary(frame, ["tokenizer"]).set_index("tokenizer")
    assert table.loc["bpe", "mean"] == pytest.approx(np.mean([0.8, 0.82, 0.87]))
    assert table.loc["char", "std"] == pytest.approx(np.std([0.7, 0.71, 0.69], ddof=1))
    assert table.loc["bpe", "n"] == 3


def test_bootstrap_ci_is_seeded_and_matches_scipy():
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, 300)
    pred = np.where(rng.random(300) < 0.7, gold, rng.integers(0, 3, 300))
    low, high = bootstrap_ci(gold, pred, "accuracy", n_resamples=500, seed=7)
    assert (low, high) == bootstrap_ci(gold, pred, "accuracy", n_resamples=500, seed=7)
    assert low < accuracy(gold, pred) < high
    reference = scipy_stats.bootstrap(
        (gold == pred,),
        np.mean,
        n_resamples=500,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.02)
    assert high == pytest.approx(reference.high, abs=0.02)
    # a normal-approximation interval of a proportion, as a sanity check of the width
    half = 1.96 * np.sqrt(accuracy(gold, pred) * (1 - accuracy(gold, pred)) / 300)
    assert high - low == pytest.approx(2 * half, rel=0.25)


def test_bootstrap_table_groups():
    predictions = pd.DataFrame(
        {
            "level": [0] * 40 + [10] * 40,
            "gold": list("ab" * 20) * 2,
            "pred": list("ab" * 20) + list("aa" * 20),
        }
    )
    table = bootstrap_table(predictions, ["level"], n_resamples=200, seed=0)
    clean = table[(table.level == 0) & (table.metric == "accuracy")].iloc[0]
    assert clean.value == 1.0 and clean.ci_low == 1.0 and clean.ci_high == 1.0
    noisy = table[(table.level == 10) & (table.metric == "accuracy")].iloc[0]
    assert noisy.value == 0.5 and noisy.ci_low < 0.5 < noisy.ci_high


def test_wilcoxon_table_against_scipy():
    a = [0.81, 0.83, 0.79, 0.85, 0.80, 0.84]
    b = [0.78, 0.80, 0.80, 0.81, 0.76, 0.79]
    frame = pd.DataFrame(
        {
            "tokenizer": ["bpe"] * 6 + ["unigram"] * 6 + ["char"] * 6,
            "seed": list(range(6)) * 3,
            "value": a + b + a,
        }
    )
    table = wilcoxon_table(frame).set_index(["a", "b"])
    expected = scipy_stats.wilcoxon(a, b)
    row = table.loc[("bpe", "unigram")]
    assert row.pvalue == pytest.approx(expected.pvalue)
    assert row.statistic == pytest.approx(expected.statistic)
    assert row.n == 6 and row.median_diff == pytest.approx(np.median(np.subtract(a, b)))
    assert table.loc[("bpe", "char")].pvalue == 1.0  # identical results


def test_summarize_writes_tables(tmp_path):
    files = {}
    for tokenizer, shift in (("bpe", 0.0), ("char", -0.05)):
        for seed in range(3):
            path = tmp_path / f"{tokenizer}-{seed}.tsv"
            pd.DataFrame(
                {
                    "task": ["pos", "pos"],
                    "level": [0, 10],
                    "metric": ["accuracy", "accuracy"],
                    "value": [0.9 + shift + seed / 100, 0.8 + shift],
                }
            ).to_csv(path, sep="\t", index=False)
            files[path] = {"language": "mr", "tokenizer": tokenizer, "seed": seed}
    metrics = read_tables(files)
    tables = summarize(metrics, tmp_path / "summary")
    summary = tables["seed_summary"]
    assert len(summary) == 4 and (summary["n"] == 3).all()
    wilcoxon = pd.read_csv(tmp_path / "summary" / "wilcoxon.tsv", sep="\t")
    assert len(wilcoxon) == 2 and set(wilcoxon["level"]) == {0, 10}
    assert wilcoxon["median_diff"].tolist() == pytest.approx([0.05, 0.05])
