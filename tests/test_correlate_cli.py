"""``tokstudy correlate`` on the tables people have, and its hostile input (issues 38, 40)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tokstudy.analyses.correlation.cells import COUNT_METRICS
from tokstudy.analyses.correlation.run import OUTPUT_FILES, SUMMARY_FILE
from tokstudy.cli import main

FAST = ["--bootstrap-samples", "20", "--permutations", "200"]


def downstream_table(seed: int = 0) -> pd.DataFrame:
    """A per-cell table shaped like a ``config/downstream.yaml`` run's: Marathi, 4
    tokenizers x 3 sizes x 2 seeds, intrinsic columns of the held-out split (``lines`` and
    ``unk_rate`` constant, ``tokens`` a count), MLM and POS scores (one noised)."""
    rng = np.random.default_rng(seed)
    rows = []
    for tokenizer in ("sp_bpe", "sp_unigram", "hft", "bbpe"):
        for size in (1000, 2000, 4000):
            mu = 40 - 3 * np.log(size) + rng.normal()
            for run in (0, 1):
                rows.append(
                    {
                        "language": "mr",
                        "tokenizer": tokenizer,
                        "vocab_size": size,
                        "seed": run,
                        "f95_heldout": rng.uniform(0.1, 0.5),
                        "mu_heldout": mu,
                        "fertility_heldout": mu / 12 + rng.normal(scale=0.1),
                        "unk_rate_heldout": 0.0,
                        "lines_heldout": 1000,
                        "tokens_heldout": round(mu * 1000),
                        "mlm_bits_per_char": 2 + mu / 20 + rng.normal(scale=0.05),
                        "mlm_bits_per_char_noise20": 2.5 + mu / 20 + rng.normal(scale=0.05),
                        "pos_accuracy": 0.9 - mu / 200 + rng.normal(scale=0.01),
                    }
                )
    return pd.DataFrame(rows)


def _correlate(cells: Path, out: Path, *extra: str) -> int:
    return main(["correlate", str(cells), "--out", str(out), *FAST, *extra])


def test_correlate_takes_a_downstream_table_without_editing(tmp_path: Path, capsys) -> None:
    table = downstream_table()
    cells = tmp_path / "cells.csv"
    table.to_csv(cells, index=False)
    assert _correlate(cells, tmp_path / "out", "--scores", "mlm_bits_per_char,pos_accuracy") == 0
    err = capsys.readouterr().err
    skipped = ["lines_heldout", "mlm_bits_per_char_noise20", "tokens_heldout", "unk_rate_heldout"]
    for column in skipped:
        assert f"tokstudy: note: {column} skipped" in err, err
    summary = json.loads((tmp_path / "out" / SUMMARY_FILE).read_text("utf-8"))
    assert sorted(entry["column"] for entry in summary["skipped"]) == skipped
    reasons = {entry["column"]: entry["reason"] for entry in summary["skipped"]}
    assert "constant" in reasons["unk_rate_heldout"] and "count" in reasons["tokens_heldout"]
    assert summary["metrics"] == ["f95_heldout", "mu_heldout", "fertility_heldout"]
    assert summary["cells"] == 12 and summary["rows"] == 24
    assert "unk_rate_heldout skipped" in (tmp_path / "out" / "correlation.md").read_text("utf-8")
    # the oracle: the table a user would have edited by hand gives the same correlations
    edited = tmp_path / "edited.csv"
    table.drop(columns=skipped).to_csv(edited, index=False)
    assert _correlate(edited, tmp_path / "hand", "--scores", "mlm_bits_per_char,pos_accuracy") == 0
    for name in ("csv", "ranking_csv", "mixed_csv"):
        file = OUTPUT_FILES[name]
        ours = pd.read_csv(tmp_path / "out" / file)
        assert ours.equals(pd.read_csv(tmp_path / "hand" / file)), file


def test_metrics_picks_and_exclude_leaves_out(tmp_path: Path) -> None:
    cells = tmp_path / "cells.csv"
    downstream_table().to_csv(cells, index=False)
    scores = ["--scores", "pos_accuracy"]
    assert _correlate(cells, tmp_path / "a", *scores, "--metrics", "mu_heldout,tokens_heldout") == 0
    summary = json.loads((tmp_path / "a" / SUMMARY_FILE).read_text("utf-8"))
    assert summary["metrics"] == ["mu_heldout", "tokens_heldout"]
    assert set(pd.read_csv(tmp_path / "a" / "correlation.csv")["intrinsic"]) == {
        "mu_heldout",
        "tokens_heldout",
    }
    assert _correlate(cells, tmp_path / "b", *scores, "--exclude", "f95_heldout") == 0
    summary = json.loads((tmp_path / "b" / SUMMARY_FILE).read_text("utf-8"))
    assert summary["metrics"] == ["mu_heldout", "fertility_heldout"]
    assert {"column": "f95_heldout", "reason": "left out by --exclude"} in summary["skipped"]


def test_count_metrics_come_from_the_metric_registry() -> None:
    assert set(COUNT_METRICS) == {"lines", "words", "tokens", "vocab_size"}


def _table(tmp_path: Path, **columns: list) -> Path:
    frame = downstream_table().iloc[::2].reset_index(drop=True)
    for name, values in columns.items():
        frame[name] = values
    path = tmp_path / "cells.csv"
    frame.to_csv(path, index=False)
    return path


def test_user_columns_named_like_internal_ones_do_not_collide(tmp_path: Path) -> None:
    # a metric called "score" and one called "log_size": the same numbers as under other names
    table = downstream_table().iloc[::2].reset_index(drop=True)
    renamed = table.rename(columns={"mu_heldout": "score", "fertility_heldout": "log_size"})
    for name, frame in (("plain", table), ("renamed", renamed)):
        frame.assign(language=["mr", "hi"] * 6).to_csv(tmp_path / f"{name}.csv", index=False)
        scores = ["--scores", "pos_accuracy", "--exclude", "mlm_bits_per_char"]
        assert _correlate(tmp_path / f"{name}.csv", tmp_path / name, *scores) == 0
    plain = pd.read_csv(tmp_path / "plain" / "correlation_mixed.csv")
    renamed_mixed = pd.read_csv(tmp_path / "renamed" / "correlation_mixed.csv")
    names = {"mu_heldout": "score", "fertility_heldout": "log_size"}
    plain["intrinsic"] = plain["intrinsic"].replace(names)
    key = ["score", "intrinsic"]
    assert len(plain) == 9  # 3 metrics in hi, mr and pooled
    pd.testing.assert_frame_equal(
        plain.sort_values(key, ignore_index=True), renamed_mixed.sort_values(key, ignore_index=True)
    )


def test_repeated_scores_are_counted_once(tmp_path: Path) -> None:
    cells = _table(tmp_path)
    assert _correlate(cells, tmp_path / "once", "--scores", "pos_accuracy") == 0
    assert _correlate(cells, tmp_path / "twice", "--scores", "pos_accuracy,pos_accuracy") == 0
    once = pd.read_csv(tmp_path / "once" / "correlation.csv")
    assert once.equals(pd.read_csv(tmp_path / "twice" / "correlation.csv")) and len(once) == 3


@pytest.mark.parametrize("separator", [";", "\t"])
def test_semicolon_and_tab_files_are_read(tmp_path: Path, separator: str) -> None:
    frame = downstream_table()
    frame.to_csv(tmp_path / "comma.csv", index=False)
    frame.to_csv(tmp_path / "other.csv", index=False, sep=separator)
    for name in ("comma", "other"):
        assert (
            _correlate(tmp_path / f"{name}.csv", tmp_path / name, "--scores", "pos_accuracy") == 0
        )
    assert pd.read_csv(tmp_path / "comma" / "correlation.csv").equals(
        pd.read_csv(tmp_path / "other" / "correlation.csv")
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--seed", "-1"], "--seed must be at least 0, got -1"),
        (["--bootstrap-samples", "0"], "--bootstrap-samples must be at least 1, got 0"),
        (["--permutations", "0"], "--permutations must be at least 1, got 0"),
        (["--confidence", "1.5"], "--confidence must be between 0 and 1, got 1.5"),
        (["--metrics", "nope"], "--metrics: unknown column(s) nope"),
        (["--exclude", "nope"], "--exclude: unknown column(s) nope"),
        (["--metrics", "pos_accuracy"], "--metrics: pos_accuracy named in --scores too"),
    ],
)
def test_argument_errors_name_the_flag(tmp_path: Path, capsys, arguments, message) -> None:
    cells = _table(tmp_path)
    out = tmp_path / "out"
    assert _correlate(cells, out, "--scores", "pos_accuracy", *arguments) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error, error
    assert not out.exists()


def test_out_checked_before_any_work(tmp_path: Path, capsys) -> None:
    cells = _table(tmp_path)
    existing = tmp_path / "file.txt"
    existing.write_text("keep\n", encoding="utf-8")
    assert _correlate(cells, existing, "--scores", "pos_accuracy") == 1
    assert f"--out {existing}: is a file, expected a folder" in capsys.readouterr().err
    assert existing.read_text("utf-8") == "keep\n"
    # the input named like an output, in the --out folder: refused, not overwritten
    victim = tmp_path / "correlation.csv"
    cells.rename(victim)
    before = victim.read_bytes()
    assert _correlate(victim, tmp_path, "--scores", "pos_accuracy") == 1
    assert "it would be overwritten" in capsys.readouterr().err
    assert victim.read_bytes() == before
