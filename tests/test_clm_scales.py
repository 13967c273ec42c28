"""The causal-LM scale agreement with the tokenizer as the unit: Kendall's τ within size
and the larger-minus-smaller difference against hand computations, brute-force
relabelling of the tokenizers and scipy called directly."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tokstudy.models.clm_scales import scale_agreement, scale_agreement_by_flags, tau_within_size

CELLS = [(t, size) for t in ("bpe", "unigram", "wordpiece", "hft") for size in (1000, 2000)]


def clm_rows(scale: str, language: str, seed: int, values: list[float]) -> list[dict]:
    """Rows of eight cells: four tokenizers at 1000 and 2000, in :data:`CELLS` order."""
    return [
        {
            "scale": scale,
            "language": language,
            "tokenizer": tokenizer,
            "vocab_size": size,
            "seed": seed,
            "bits_per_byte": value,
        }
        for (tokenizer, size), value in zip(CELLS, values, strict=True)
    ]


#: at 1000 the tokenizers rank 1, 2, 3, 4 at tiny and 1, 3, 2, 4 at small (one discordant
#: pair of six: τ = 4/6); at 2000 alike at both (τ = 1): τ within size = (4/6 + 1) / 2
TINY = [1.0, 0.5, 2.0, 1.5, 3.0, 2.5, 4.0, 3.5]
SMALL = [0.9, 0.4, 2.2, 1.4, 1.9, 2.4, 3.5, 3.0]


def table(*groups: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for group in groups for row in group])


def test_tau_within_size_and_difference_by_hand():
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("tiny", "en", 1, [9.0] * 8),  # seed 1: small has none, left out
        clm_rows("small", "en", 0, SMALL),
    )
    row = scale_agreement(frame, bootstrap_resamples=200, bootstrap_seed=0).iloc[0]
    assert (row["smaller"], row["larger"], row["seeds"], row["cells"]) == ("tiny", "small", "0", 8)
    assert row["tokenizers"] == 4
    assert row["kendall_tau"] == pytest.approx((4 / 6 + 1) / 2)
    assert row["mean_bpb_smaller"] == pytest.approx(np.mean(TINY))
    assert row["mean_difference"] == pytest.approx(np.mean(np.subtract(SMALL, TINY)))
    assert row["larger_better_cells"] == int(np.sum(np.array(SMALL) < np.array(TINY)))
    # Wilcoxon over the 4 tokenizers' mean differences, not over the 8 cells
    per_tokenizer = np.subtract(SMALL, TINY).reshape(4, 2).mean(axis=1)
    assert row["p_difference"] == pytest.approx(stats.wilcoxon(per_tokenizer).pvalue)
    assert row["p_tau_adjusted"] == row["p_tau"]  # one row: Holm leaves it


def test_taus_p_relabels_the_tokenizers_by_brute_force():
    # oracle: every relabelling of the 4 tokenizers at the larger scale (4! = 24), the same
    # at both sizes, τ within size recomputed by scipy; scipy's two-sided p over them
    frame = table(clm_rows("tiny", "en", 0, TINY), clm_rows("small", "en", 0, SMALL))
    row = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0).iloc[0]
    tiny, small = np.array(TINY).reshape(4, 2), np.array(SMALL).reshape(4, 2)

    def tau(larger: np.ndarray) -> float:
        return np.mean([stats.kendalltau(tiny[:, s], larger[:, s]).statistic for s in (0, 1)])

    null = np.array([tau(small[list(order)]) for order in itertools.permutations(range(4))])
    observed = tau(small)
    less, greater = np.mean(null <= observed + 1e-12), np.mean(null >= observed - 1e-12)
    assert row["p_tau"] == pytest.approx(min(1, 2 * min(less, greater)))


def test_intervals_resample_tokenizers_with_their_cells():
    # oracle: scipy's bootstrap over the 4 tokenizers in name order (same generator), each
    # drawn tokenizer's two cells gathered by hand
    frame = table(clm_rows("tiny", "en", 0, TINY), clm_rows("small", "en", 0, SMALL))
    row = scale_agreement(frame, bootstrap_resamples=300, bootstrap_seed=7).iloc[0]
    a, b = np.array(TINY), np.array(SMALL)
    names = [tokenizer for tokenizer, size in CELLS[::2]]
    first = {name: 2 * names.index(name) for name in names}  # each one's cells in CELLS

    def mean_difference(drawn: np.ndarray) -> float:
        starts = [first[sorted(names)[int(t)]] for t in drawn]
        cells = np.concatenate([[start, start + 1] for start in starts])
        return float(np.mean(b[cells] - a[cells]))

    expected = stats.bootstrap(
        (np.arange(4),),
        mean_difference,
        vectorized=False,
        n_resamples=300,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert (row["difference_low"], row["difference_high"]) == pytest.approx(
        (expected.low, expected.high)
    )
    assert row["tau_low"] <= row["kendall_tau"] <= row["tau_high"]


def test_tau_within_size_ignores_what_size_alone_orders():
    # both scales order the cells by size only (bigger vocabulary, fewer bits), the
    # tokenizers at random within a size: τ over cells is high, τ within size is not
    sizes = np.array([1000, 2000] * 4)
    smaller = np.array([3.0, 1.0, 3.1, 1.1, 3.2, 1.2, 3.3, 1.3])
    larger = np.array([2.3, 0.2, 2.0, 0.3, 2.2, 0.0, 2.1, 0.1])
    assert stats.kendalltau(smaller, larger).statistic == pytest.approx(3 / 7)
    by_hand = np.mean(
        [stats.kendalltau(smaller[sizes == s], larger[sizes == s]).statistic for s in (1000, 2000)]
    )
    assert float(tau_within_size(smaller, larger, sizes)) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(-1 / 3)  # within each size they disagree


def test_holm_over_languages_and_preset_order():
    reversed_small = [4.0, 3.5, 3.0, 2.5, 2.0, 1.5, 1.0, 0.5]
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
    low, high = sorted(rows["p_tau"])
    holm = {low: min(1, 2 * low), high: max(min(1, 2 * low), min(1, high))}
    assert list(rows["p_tau_adjusted"]) == pytest.approx([holm[v] for v in rows["p_tau"]])


def test_a_language_with_one_scale_or_one_shared_cell_has_no_row():
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("tiny", "mr", 0, TINY),
        clm_rows("small", "mr", 0, SMALL)[:1],  # one shared cell: τ undefined
    )
    assert scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0).empty


def test_two_budgets_of_one_preset_are_ordered_by_preset_then_name():
    flops = [1.1, 0.6, 2.1, 1.6, 2.9, 2.4, 4.2, 3.7]  # every tokenizer pair as TINY orders it
    frame = table(
        clm_rows("tiny_flops", "en", 0, flops),
        clm_rows("small", "en", 0, SMALL),
        clm_rows("tiny", "en", 0, TINY),
    ).assign(preset=lambda t: t["scale"].str.replace("_flops", ""))
    rows = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0)
    pairs = list(zip(rows["smaller"], rows["larger"], strict=True))
    assert pairs == [("tiny", "tiny_flops"), ("tiny", "small"), ("tiny_flops", "small")]
    assert rows.iloc[0]["kendall_tau"] == pytest.approx(1.0)


def test_only_the_seeds_both_scales_trained_are_averaged():
    # tiny has seeds 0 and 1, small 1 and 2: seed 1 alone is shared; with 0 and 1 shared
    # both, each cell is the mean over them
    frame = table(
        clm_rows("tiny", "en", 0, [9.0] * 8),
        clm_rows("tiny", "en", 1, TINY),
        clm_rows("small", "en", 1, SMALL),
        clm_rows("small", "en", 2, [9.0] * 8),
    )
    row = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0).iloc[0]
    assert row["seeds"] == "1"
    assert row["mean_bpb_smaller"] == pytest.approx(np.mean(TINY))
    assert row["mean_bpb_larger"] == pytest.approx(np.mean(SMALL))
    both = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("tiny", "en", 1, [v + 1 for v in TINY]),
        clm_rows("small", "en", 0, SMALL),
        clm_rows("small", "en", 1, SMALL),
    )
    row = scale_agreement(both, bootstrap_resamples=50, bootstrap_seed=0).iloc[0]
    assert row["seeds"] == "0 1"
    assert row["mean_bpb_smaller"] == pytest.approx(np.mean(TINY) + 0.5)
    assert row["mean_difference"] == pytest.approx(np.mean(SMALL) - np.mean(TINY) - 0.5)


# Wilcoxon is not asked about zeros: it warns so (numpy's warning, the only one made an error)
@pytest.mark.filterwarnings("error:invalid value encountered:RuntimeWarning")
def test_differences_tied_or_from_two_tokenizers():
    # equal bits per byte at both scales: no cell is better, no difference to test (p 1);
    # two tokenizers both better at the larger scale: Wilcoxon's exact p over 2 is 0.5
    frame = table(clm_rows("tiny", "en", 0, TINY), clm_rows("small", "en", 0, TINY))
    row = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0).iloc[0]
    assert (row["larger_better_cells"], row["mean_difference"]) == (0, 0)
    assert (row["p_difference"], row["p_difference_adjusted"]) == (1.0, 1.0)
    better = [0.5, 0.0, 1.7, 1.2]  # bpe 0.5 lower at both sizes, unigram 0.3
    two = table(
        clm_rows("tiny", "en", 0, TINY)[:4], clm_rows("small", "en", 0, better + TINY[4:])[:4]
    )
    row = scale_agreement(two, bootstrap_resamples=50, bootstrap_seed=0).iloc[0]
    assert row["tokenizers"] == 2
    assert row["p_difference"] == pytest.approx(0.5)


def test_the_difference_p_is_holm_adjusted_over_the_rows():
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("small", "en", 0, SMALL),
        clm_rows("tiny", "fi", 0, TINY),
        clm_rows("small", "fi", 0, [v - 1 for v in TINY]),  # every cell 1 lower
    )
    rows = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0)
    assert rows.loc[1, "larger_better_cells"] == 8
    low, high = sorted(rows["p_difference"])
    holm = {low: min(1, 2 * low), high: max(min(1, 2 * low), min(1, high))}
    assert list(rows["p_difference_adjusted"]) == pytest.approx(
        [holm[v] for v in rows["p_difference"]]
    )


def test_a_pair_with_too_few_shared_cells_leaves_the_other_pairs():
    # small shares one cell with tiny (no row), medium shares two with each (a row each:
    # two cells of one size give τ = ±1)
    frame = table(
        clm_rows("tiny", "en", 0, TINY),
        clm_rows("small", "en", 0, SMALL)[:1],
        clm_rows("medium", "en", 0, SMALL)[:1] + clm_rows("medium", "en", 0, SMALL)[2:3],
    )
    rows = scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=0)
    pairs = list(zip(rows["smaller"], rows["larger"], strict=True))
    assert pairs == [("tiny", "medium")]
    assert rows.iloc[0]["cells"] == 2
    assert rows.iloc[0]["kendall_tau"] == pytest.approx(1.0)  # bpe below unigram at both


def test_tau_within_size_pairs_each_size_with_itself():
    # the smaller scale orders the tokenizers differently at the two sizes; one size has
    # only two tokenizers (τ = ±1 counts), one a single tokenizer (no τ)
    sizes = np.array(["1000"] * 3 + ["2000"] * 2 + ["4000"])
    smaller = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 5.0])
    larger = np.array([1.5, 2.5, 2.0, 1.0, 2.0, 0.0])
    by_hand = (1 / 3 + -1.0) / 2  # 1000: one discordant pair of three; 2000: discordant
    assert float(tau_within_size(smaller, larger, sizes)) == pytest.approx(by_hand)
    # a batch of two resamples gives two τ, each its row's
    batch = tau_within_size(np.stack([smaller, smaller]), np.stack([larger, smaller]), sizes)
    assert batch.tolist() == pytest.approx([by_hand, 1.0])


# an undefined τ is NaN, not a mean of nothing (numpy's warning, the only one made an error:
# scipy may warn of a constant input)
@pytest.mark.filterwarnings("error:Mean of empty slice:RuntimeWarning")
def test_tau_within_size_without_a_defined_size_is_nan():
    one_each = np.array(["1000", "2000"])
    assert np.isnan(tau_within_size(np.array([1.0, 2.0]), np.array([1.0, 3.0]), one_each))
    constant = np.array([1.0, 1.0])  # τ undefined at the one size
    assert np.isnan(tau_within_size(np.array([1.0, 2.0]), constant, np.array(["1000"] * 2)))


def test_a_monte_carlo_tau_p_is_seeded_and_near_the_exact_one():
    # 7 tokenizers at one size: 5040 relabellings, more than the 500 drawn. Oracle: the
    # exact p over all 5040 by brute force with scipy; a seeded draw gives the same p twice
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    larger = np.array([1.2, 1.1, 3.5, 2.9, 4.0, 6.5, 5.9])

    def rows(scale: str, bpb: np.ndarray) -> list[dict]:
        return [
            {"scale": scale, "language": "en", "tokenizer": f"t{i}", "vocab_size": 1000,
             "seed": 0, "bits_per_byte": v}
            for i, v in enumerate(bpb)
        ]  # fmt: skip

    frame = pd.DataFrame(rows("tiny", values) + rows("small", larger))
    first, again = (
        scale_agreement(frame, bootstrap_resamples=50, bootstrap_seed=3, permutations=500)
        for _ in range(2)
    )
    assert first["p_tau"].iloc[0] == again["p_tau"].iloc[0]
    observed = stats.kendalltau(values, larger).statistic
    null = np.array(
        [stats.kendalltau(values, larger[list(order)]).statistic
         for order in itertools.permutations(range(7))]
    )  # fmt: skip
    exact = min(1, 2 * min(np.mean(null <= observed + 1e-12), np.mean(null >= observed - 1e-12)))
    # 500 draws: the p's standard error is at most 2·sqrt(0.25 / 500) ≈ 0.045
    assert first["p_tau"].iloc[0] == pytest.approx(exact, abs=0.09)
    assert first["p_tau"].iloc[0] > 0  # Monte Carlo: never 0


def test_flagged_runs_are_left_out_and_kept():
    # small's bpe at 1000 undertrained: without it, 1000 ranks unigram, wordpiece, hft as
    # 2.0, 3.0, 4.0 at tiny and 2.2, 1.9, 3.5 at small (τ = 1/3 by hand), 2000 as before
    # (τ = 1); with it, the first test's (4/6 + 1) / 2
    frame = table(clm_rows("tiny", "en", 0, TINY), clm_rows("small", "en", 0, SMALL))
    frame = frame.assign(undertrained=False, lossy=False)
    clean = scale_agreement_by_flags(frame, bootstrap_resamples=50, bootstrap_seed=0)
    assert clean["flagged_runs"].tolist() == ["kept"]  # nothing flagged: one set
    frame.loc[(frame["scale"] == "small") & (frame.index == 8), "undertrained"] = True
    rows = scale_agreement_by_flags(frame, bootstrap_resamples=50, bootstrap_seed=0)
    assert rows["flagged_runs"].tolist() == ["excluded", "kept"]
    assert rows["cells"].tolist() == [7, 8]
    assert rows["kendall_tau"].tolist() == pytest.approx([(1 / 3 + 1) / 2, (4 / 6 + 1) / 2])
    lossy = frame.assign(undertrained=False, lossy=frame.index == 0)  # tiny's bpe at 1000
    rows = scale_agreement_by_flags(lossy, bootstrap_resamples=50, bootstrap_seed=0)
    assert rows["cells"].tolist() == [7, 8]
