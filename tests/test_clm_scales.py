"""The causal-LM scale agreement: Kendall's τ and the larger-minus-smaller difference
against hand computations and scipy called directly."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tokstudy.models.clm_scales import scale_agreement


def clm_rows(scale: str, language: str, seed: int, values: list[float]) -> list[dict]:
    """Rows of four cells: (bpe, 1000), (bpe, 2000), (unigram, 1000), (unigram, 2000)."""
    cells = [("bpe", 1000), ("bpe", 2000), ("unigram", 1000), ("unigram", 2000)]
    return [
        {
            "scale": scale,
            "language": language,
            "tokenizer": tokenizer,
            "vocab_size": size,
            "seed": seed,
            "bits_per_byte": value,
        }
        for (tokenizer, size), value in zip(cells, values, strict=True)
    ]


TINY = [1.0, 2.0, 3.0, 4.0]
SMALL = [0.9, 2.2, 1.9, 3.5]  # one discordant pair of six: cells 2 and 3


def table(*groups: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for group in groups for row in group])


def test_tau_and_difference_by_hand():
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("tiny", "en", 1, [9.0, 9.0, 9.0, 9.0]),  # seed 1: small has none, left out
        clm_rows("small", "en", 0, SMALL),
    )
    row = scale_agreement(frame, bootstrap_resamples=200, bootstrap_seed=0).iloc[0]
    assert (row["smaller"], row["larger"], row["seeds"], row["cells"]) == ("tiny", "small", "0", 4)
    assert row["kendall_tau"] == pytest.approx((5 - 1) / 6)  # 5 concordant, 1 discordant
    assert row["mean_bpb_smaller"] == pytest.approx(2.5)
    assert row["mean_bpb_larger"] == pytest.approx((0.9 + 2.2 + 1.9 + 3.5) / 4)
    assert row["mean_difference"] == pytest.approx((-0.1 + 0.2 - 1.1 - 0.5) / 4)
    assert row["larger_better_cells"] == 3
    assert row["p_tau"] == pytest.approx(stats.kendalltau(TINY, SMALL).pvalue)
    assert row["p_difference"] == pytest.approx(stats.wilcoxon(SMALL, TINY).pvalue)
    assert row["p_tau_adjusted"] == row["p_tau"]  # one row: Holm leaves it


def test_intervals_are_scipy_bootstrap_over_cells():
    frame = table(clm_rows("tiny", "en", 0, TINY), clm_rows("small", "en", 0, SMALL))
    row = scale_agreement(frame, bootstrap_resamples=300, bootstrap_seed=7).iloc[0]
    a, b = np.array(TINY), np.array(SMALL)
    expected = stats.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(y - x, axis=axis),
        paired=True,
        n_resamples=300,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert (row["difference_low"], row["difference_high"]) == pytest.approx(
        (expected.low, expected.high)
    )
    assert row["tau_low"] <= row["kendall_tau"] <= row["tau_high"]


def test_holm_over_languages_and_preset_order():
    reversed_small = [4.0, 3.0, 2.0, 1.0]
    frame = table(
        clm_rows("small", "fi", 0, reversed_small),  # listed first: order comes from presets
        clm_rows("tiny", "fi", 0, TINY),
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("small", "en", 0, SMALL),
    )
    rows = scale_agreement(frame, bootstrap_resamples=100, bootstrap_seed=0)
    assert list(rows["language"]) == ["en", "fi"]
    assert set(rows["smaller"]) == {"tiny"}
    assert rows.loc[1, "kendall_tau"] == pytest.approx(-1.0)
    p = np.array(
        [stats.kendalltau(TINY, SMALL).pvalue, stats.kendalltau(TINY, reversed_small).pvalue]
    )
    low, high = sorted(p)
    holm = {low: min(1, 2 * low), high: max(min(1, 2 * low), min(1, high))}
    assert list(rows["p_tau_adjusted"]) == pytest.approx([holm[v] for v in p])


def test_a_language_with_one_scale_or_one_shared_cell_has_no_row():
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("tiny", "mr", 0, TINY),
        clm_rows("small", "mr", 0, SMALL)[:1],  # one shared cell: τ undefined
    )
    assert scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0).empty


def test_two_budgets_of_one_preset_are_ordered_by_preset_then_name():
    flops = [1.1, 2.1, 2.9, 4.2]  # every pair concordant with TINY
    frame = table(
        clm_rows("tiny_flops", "en", 0, flops),
        clm_rows("small", "en", 0, SMALL),
        clm_rows("tiny", "en", 0, TINY),
    ).assign(preset=lambda t: t["scale"].str.replace("_flops", ""))
    rows = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0)
    pairs = list(zip(rows["smaller"], rows["larger"], strict=True))
    assert pairs == [("tiny", "tiny_flops"), ("tiny", "small"), ("tiny_flops", "small")]
    assert rows.iloc[0]["kendall_tau"] == pytest.approx(1.0)
