"""train_fraction and max_train_lines: a seeded share of the training lines, recorded in
meta.json."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from conftest import write_lines
from hypothesis import given
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import compute_metrics
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.cells import Cell
from tokstudy.tokenizers.directory import META_FILE
from tokstudy.tokenizers.registry import adapter_class, load_tokenizer
from tokstudy.tokenizers.train_fraction import lines_used, sampled_indices, share
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

LETTERS = list(string.ascii_lowercase[:20])


@given(
    total=st.integers(1, 500),
    fraction=st.floats(0.001, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_share_keeps_round_fraction_lines_in_order(
    total: int, fraction: float, seed: int
) -> None:
    kept = sampled_indices(total, fraction, seed)
    assert len(kept) == max(1, round(fraction * total)) == lines_used(total, fraction)
    assert len(set(kept.tolist())) == len(kept)
    assert kept.tolist() == sorted(kept.tolist())
    assert kept.min() >= 0 and kept.max() < total
    assert (sampled_indices(total, fraction, seed) == kept).all()


@given(
    total=st.integers(1, 500),
    fraction=st.floats(0.001, 1.0),
    cap=st.integers(1, 600),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_cap_keeps_at_most_cap_lines_of_the_share(
    total: int, fraction: float, cap: int, seed: int
) -> None:
    kept = sampled_indices(total, fraction, seed, cap)
    assert len(kept) == min(cap, max(1, round(fraction * total)))
    assert len(set(kept.tolist())) == len(kept) and kept.tolist() == sorted(kept.tolist())
    assert (sampled_indices(total, fraction, seed, cap) == kept).all()


def test_the_capped_share_is_uniform() -> None:
    # every line is kept with probability cap / total: 400 draws of 3 of 12 lines, each
    # line's count binomial(400, 1/4) (mean 100, sd 8.7); 5 sd either side
    counts = [0] * 12
    for seed in range(400):
        for index in share(12, 1.0, seed, cap=3).indices():
            counts[index] += 1
    assert sum(counts) == 1200 and all(56 < count < 144 for count in counts)


def test_the_whole_share_is_every_line() -> None:
    assert sampled_indices(7, 1.0, 3).tolist() == list(range(7))


def test_a_tokenizer_sees_only_its_share_and_meta_records_it(tmp_path: Path) -> None:
    # one distinct character per line: the char vocabulary is the set of lines trained on
    corpus = write_lines(tmp_path / "c.txt", LETTERS)
    spec = TrainSpec(None, seed=5, label="xx", train_fraction=0.25)
    directory = tmp_path / "char"
    tokenizer = train_to_directory("char", corpus, spec, directory)
    expected = {LETTERS[i] for i in sampled_indices(20, 0.25, 5)}
    assert len(expected) == 5
    assert load_tokenizer(directory).vocab == tokenizer.vocab
    assert {t for t in tokenizer.vocab if len(t) == 1} == expected
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    assert meta["train_fraction"] == 0.25
    assert meta["train_lines"] == {"used": 5, "total": 20}
    whole = adapter_class("char").train(corpus, TrainSpec(None, seed=5))
    assert {t for t in whole.vocab if len(t) == 1} == set(LETTERS)


def test_a_capped_tokenizer_sees_cap_lines_and_meta_records_it(tmp_path: Path, caplog) -> None:
    corpus = write_lines(tmp_path / "c.txt", LETTERS)
    spec = TrainSpec(None, seed=5, label="xx", max_train_lines=6)
    directory = tmp_path / "char"
    with caplog.at_level("INFO", logger="tokstudy.tokenizers.train_fraction"):
        tokenizer = train_to_directory("char", corpus, spec, directory)
    assert {t for t in tokenizer.vocab if len(t) == 1} == {
        LETTERS[i] for i in sampled_indices(20, 1.0, 5, cap=6)
    }
    assert "max_train_lines 6: training on 6 of 20 lines" in caplog.text
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    assert meta["max_train_lines"] == 6 and "train_fraction" not in meta
    assert meta["train_lines"] == {"used": 6, "total": 20}
    # a cap above the corpus trains on every line, with no copy of it
    roomy = train_to_directory("char", corpus, TrainSpec(None, max_train_lines=20), tmp_path / "r")
    assert {t for t in roomy.vocab if len(t) == 1} == set(LETTERS)
    # with a fraction: the cap bounds the share (0.5 of 20 = 10 lines, at most 4)
    both = TrainSpec(None, seed=5, train_fraction=0.5, max_train_lines=4)
    capped = adapter_class("char").train(corpus, both)
    assert {t for t in capped.vocab if len(t) == 1} == {
        LETTERS[i] for i in sampled_indices(20, 0.5, 5, cap=4)
    }


@pytest.mark.parametrize("cap", [0, -3, 2.5, True, "many"])
def test_a_cap_that_is_not_a_whole_number_is_one_line(cap: object) -> None:
    with pytest.raises(TokstudyError, match=r"^max_train_lines must be a whole number ≥ 1"):
        TrainSpec(100, max_train_lines=cap)  # type: ignore[arg-type]


def test_a_smaller_share_changes_compression_within_one_family(english_corpus: Path) -> None:
    def chars_per_token(fraction: float) -> float:
        spec = TrainSpec(2000, seed=7, label="en", size_policy="adjust", train_fraction=fraction)
        tokenizer = adapter_class("hf_bpe").train(english_corpus, spec)
        return compute_metrics(tokenizer, english_corpus)[0]["chars_per_token"]

    assert chars_per_token(0.05) < chars_per_token(1.0)


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5, True, "half"])
def test_a_fraction_outside_0_1_is_one_line(fraction: object) -> None:
    with pytest.raises(TokstudyError, match=r"^train_fraction must be (a number )?in \(0, 1\]"):
        TrainSpec(100, train_fraction=fraction)  # type: ignore[arg-type]


def _config(tmp_path: Path, entry: dict) -> dict:
    corpus = write_lines(tmp_path / "xx.txt", ["a b"])
    return {
        "languages": {"xx": {"path": str(corpus)}},
        "vocab_sizes": [100],
        "tokenizers": {"hf_bpe": entry, "sp_bpe": {}},
        "metrics": ["mu"],
    }


def test_the_study_passes_a_tokenizers_fraction_to_its_cells_only(tmp_path: Path) -> None:
    plan = StudyPlan(Study(_config(tmp_path, {"train_fraction": 0.1})))
    assert plan.tokenizers.train_spec(Cell("xx", "hf_bpe", "100", 100))["train_fraction"] == 0.1
    assert "train_fraction" not in plan.tokenizers.train_spec(Cell("xx", "sp_bpe", "100", 100))


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("train_fraction", r"train_fraction must be in \(0, 1\], got 0$"),
        ("max_train_lines", r"max_train_lines must be a whole number ≥ 1"),
    ],
)
def test_a_study_value_out_of_range_names_the_key(tmp_path: Path, key: str, message: str) -> None:
    with pytest.raises(TokstudyError, match=rf"^config key tokenizers\.hf_bpe\.{message}"):
        StudyPlan(Study(_config(tmp_path, {key: 0})))


def test_the_study_cap_reaches_every_tokenizer_and_a_tokenizers_own_wins(tmp_path: Path) -> None:
    config = _config(tmp_path, {"max_train_lines": 50})
    config["max_train_lines"] = 1000
    plan = StudyPlan(Study(config))
    spec = plan.tokenizers.train_spec
    assert spec(Cell("xx", "hf_bpe", "100", 100))["max_train_lines"] == 50
    assert spec(Cell("xx", "sp_bpe", "100", 100))["max_train_lines"] == 1000
    uncapped = StudyPlan(Study(_config(tmp_path, {})))
    assert "max_train_lines" not in uncapped.tokenizers.train_spec(Cell("xx", "sp_bpe", "100", 100))
