"""Models that say whether they learned: a fine-tune at the majority class is ``collapsed``,
a BERT near its unigram entropy ``undertrained``, and the correlation leaves flagged runs
out (or keeps them) with a note naming each."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.models import classification_scores, pretrain
from tokstudy.models.run_flags import drop_flagged_runs, flagged_runs, mark_flagged


def test_a_model_that_predicts_the_majority_class_has_collapsed() -> None:
    gold = ["NOUN"] * 6 + ["VERB"] * 3 + ["ADJ"]
    flags = classification_scores.learned_or_not(gold, ["NOUN"] * 10, n_labels=3)
    assert flags == {"majority_accuracy": 0.6, "collapsed": 1.0}


def test_a_model_one_point_above_the_majority_class_has_collapsed_two_points_not() -> None:
    gold = ["a"] * 60 + ["b"] * 40  # majority 0.60
    one_point = ["a"] * 60 + ["b"] + ["a"] * 39  # accuracy 0.61
    two_points = ["a"] * 60 + ["b"] * 2 + ["a"] * 38  # accuracy 0.62
    # three labels: the macro-F1 of two_points, (120/158 + 4/42) / 2 = 0.43, is above 1/3
    assert classification_scores.learned_or_not(gold, one_point, 3)["collapsed"] == 1.0
    assert classification_scores.learned_or_not(gold, two_points, 3)["collapsed"] == 0.0
    # two labels: 0.43 is at most 1/2, so two_points has collapsed too
    assert classification_scores.learned_or_not(gold, two_points, 2)["collapsed"] == 1.0


def test_a_macro_f1_at_one_over_the_labels_is_collapsed_whatever_the_accuracy() -> None:
    gold = ["a", "a", "b", "b", "c", "c"]  # majority 1/3
    pred = ["a", "a", "a", "a", "a", "a"]  # accuracy 1/3; macro-F1 (0.5 + 0 + 0) / 3 = 1/6
    assert classification_scores.learned_or_not(gold, pred, 3)["collapsed"] == 1.0
    right = classification_scores.learned_or_not(gold, gold, 3)
    assert right == {"majority_accuracy": pytest.approx(1 / 3), "collapsed": 0.0}


def test_an_mlm_near_its_unigram_entropy_is_undertrained() -> None:
    ids = np.array([5, 5, 7, 7])  # two tokens, equally frequent: entropy ln 2
    near = pretrain.learned_or_not(0.68, ids, 0.05, Path("run"))
    assert near["unigram_entropy"] == pytest.approx(math.log(2))
    assert near["below_unigram"] == pytest.approx(1 - 0.68 / math.log(2))
    assert near["undertrained"] == 1.0
    assert pretrain.learned_or_not(0.6, ids, 0.05, Path("run"))["undertrained"] == 0.0


def _results() -> pd.DataFrame:
    rows = []
    runs = [
        # sp_bpe loses 0.4 % of the held-out bytes: lossy; bbpe loses a byte in a few lines,
        # 0.05 % of the bytes: under the tolerance, not flagged
        (
            "clm",
            "tiny",
            "en",
            "sp_bpe",
            "1000",
            0,
            {"undertrained": 0.0, "roundtrip": 0.97, "lossy_bytes": 0.004},
        ),
        (
            "clm",
            "tiny",
            "en",
            "bbpe",
            "1000",
            0,
            {"undertrained": 0.0, "roundtrip": 0.99, "lossy_bytes": 0.0005},
        ),
        (
            "clm",
            "tiny",
            "en",
            "hft",
            "1000",
            0,
            {"undertrained": 1.0, "roundtrip": 1.0, "lossy_bytes": 0.0},
        ),
        ("pos", "", "en", "bbpe", "1000", 0, {"collapsed": 1.0, "majority_accuracy": 0.16}),
        ("pos", "", "en", "hft", "1000", 0, {"collapsed": 0.0, "majority_accuracy": 0.16}),
    ]
    for task, scale, language, tokenizer, size, seed, flags in runs:
        score = "bits_per_byte" if task == "clm" else "accuracy"
        for level in (0, 20):
            for metric, value in {score: 1.5, **flags}.items():
                rows.append((task, scale, language, tokenizer, size, seed, level, metric, value))
    columns = ["task", "scale", "language", "tokenizer", "vocab_size", "seed", "level"]
    return pd.DataFrame(rows, columns=[*columns, "metric", "value"])


def test_flagged_runs_are_found_by_their_level_0_flags() -> None:
    flagged = flagged_runs(_results())
    found = {(row.task, row.tokenizer): row.flags for row in flagged.itertuples()}
    assert found == {
        ("clm", "sp_bpe"): "lossy",
        ("clm", "hft"): "undertrained",
        ("pos", "bbpe"): "collapsed",
    }


def test_flagged_runs_are_left_out_with_a_note_or_kept() -> None:
    results, notes = _results(), []
    kept = drop_flagged_runs(results, "exclude", notes)
    left = set(zip(kept["task"], kept["tokenizer"], strict=True))
    assert left == {("clm", "bbpe"), ("pos", "hft")}
    assert len(notes) == 1 and notes[0].startswith("3 run(s) left out")
    assert "clm tiny en sp_bpe 1000 0 lossy" in notes[0]
    notes = []
    assert drop_flagged_runs(results, "keep", notes).equals(results)
    assert notes[0].startswith("3 flagged run(s) kept")


def test_an_unknown_flagged_run_policy_is_one_line_naming_the_key() -> None:
    with pytest.raises(TokstudyError, match=r"analyses\.correlation.*flagged_runs"):
        CorrelationSettings(flagged_runs="drop")


def test_the_seed_summary_marks_groups_with_flagged_seeds() -> None:
    results = _results()
    pos = results[(results["task"] == "pos") & (results["metric"] == "accuracy")]
    summary = pd.DataFrame(
        {
            "task": pos["task"],
            "scale": pos["scale"],
            "language": pos["language"],
            "tokenizer": pos["tokenizer"],
            "vocab_size": pos["vocab_size"],
            "level": pos["level"],
            "metric": pos["metric"],
            "mean": 1.5,
        }
    ).reset_index(drop=True)
    marked = mark_flagged(summary, flagged_runs(results))
    by_tokenizer = marked.groupby("tokenizer")[["flagged_seeds", "flags"]].first()
    assert by_tokenizer.loc["bbpe"].tolist() == [1, "collapsed"]
    assert by_tokenizer.loc["hft"].tolist() == [0, ""]


def test_the_page_leaves_flagged_runs_out_of_a_cells_scores_and_says_so() -> None:
    from tokstudy.report.page.recommend import _downstream_values

    values = _downstream_values(_results(), "en").set_index("tokenizer")
    # hft: its clm run is undertrained (left out), its pos run learned
    assert math.isnan(values.loc["hft", "clm_bits_per_byte_tiny"])
    assert values.loc["hft", "pos_accuracy"] == 1.5
    assert values.loc["hft", "flags"] == "clm seed 0 undertrained"
    assert values.loc["bbpe", "flags"] == "pos seed 0 collapsed"
    assert values.loc["sp_bpe", "flags"] == "clm seed 0 lossy"
