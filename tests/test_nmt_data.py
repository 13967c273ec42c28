"""NMT data: aligned reading, pair cleaning, deduplication, the seeded split and its config."""

from __future__ import annotations

import gzip
import json
import logging
import random
from pathlib import Path
from unittest.mock import patch

import pandas as pd
import pytest
from conftest import SHARED, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.nmt import data as nmt_data
from tokstudy.nmt.config import NMTConfig, SplitConfig, TrainConfig
from tokstudy.nmt.data import (
    SUMMARY_FILE,
    Overlap,
    PairStats,
    SplitPairs,
    cleaned_pairs,
    first_occurrences,
    held_out_positions,
    overlap,
    raw_pairs,
    read_split,
    split_corpus,
)
from tokstudy.training.config import from_mapping

pytestmark = pytest.mark.shared


HFT2022 = SHARED / "corpora" / "hft2022"


def test_line_count_mismatch_names_both_files_and_counts(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "a.en", ["one", "two", "three"])
    target = write_lines(tmp_path / "a.mr", ["एक", "दोन"])
    with pytest.raises(TokstudyError) as error:
        list(SplitPairs(source, target))
    message = str(error.value)
    assert "a.en has 3 lines" in message and "a.mr has 2" in message
    assert "\n" not in message


def test_a_streamed_split_reads_the_same_pairs_each_time(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "s.en", ["a\rb", "c", ""])
    target = write_lines(tmp_path / "s.mr", ["x", "", "z"])
    pairs = SplitPairs(source, target)
    assert list(pairs) == list(pairs) == [("a\rb", "x"), ("c", ""), ("", "z")]


def test_a_line_count_mismatch_counts_the_lines_of_gzip_files(tmp_path: Path) -> None:
    source = tmp_path / "a.en.gz"
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        handle.write("one\ntwo\nthree\n")
    target = write_lines(tmp_path / "a.mr", ["एक"])
    with pytest.raises(TokstudyError, match=r"a\.en\.gz has 3 lines, .*a\.mr has 1$"):
        list(SplitPairs(source, target))


def test_gzip_files_and_stray_carriage_returns_keep_the_alignment(tmp_path: Path) -> None:
    source = tmp_path / "s.txt.gz"
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        handle.write("a\rb\nc\n")
    target = write_lines(tmp_path / "t.txt", ["x", "y"])
    assert list(raw_pairs([source, target])) == [("a\rb", "x"), ("c", "y")]


def test_tsv_input_and_its_errors(tmp_path: Path) -> None:
    tsv = write_lines(tmp_path / "p.tsv", ["hello\tनमस्कार", "yes\tहो"])
    assert list(raw_pairs([tsv])) == [("hello", "नमस्कार"), ("yes", "हो")]
    bad = write_lines(tmp_path / "bad.tsv", ["a\tb", "a\tb\tc"])
    with pytest.raises(TokstudyError, match=r"bad\.tsv: line 2 has 3 tab-separated fields"):
        list(raw_pairs([bad]))
    with pytest.raises(TokstudyError, match="expected one TSV file or two files, got 3"):
        raw_pairs([tsv, tsv, tsv])


def test_one_sided_empty_lines_drop_the_pair_and_are_counted() -> None:
    pairs = [("a", "A"), ("", "B"), ("c", "  "), ("  ", ""), (" d ", "D ")]
    stats = PairStats()
    kept = list(cleaned_pairs(iter(pairs), stats))
    stats.pairs_kept = len(kept)
    assert kept == [("a", "A"), ("d", "D")]
    assert (stats.source_only_empty, stats.target_only_empty, stats.both_empty) == (1, 1, 1)
    assert (stats.pairs_read, stats.pairs_kept) == (5, 2)


def test_duplicate_pairs_keep_their_first_occurrence() -> None:
    pairs = [("a", "A"), ("b", "B"), ("a", "A"), ("a", "other"), ("b", "B ")]
    cleaned = list(cleaned_pairs(pairs, PairStats()))
    assert first_occurrences(cleaned).tolist() == [True, True, False, True, False]
    # the sides are kept apart: a tab inside a side cannot make two pairs one
    assert first_occurrences([("a\tb", "c"), ("a", "b\tc")]).tolist() == [True, True]


@given(
    st.lists(st.tuples(st.sampled_from("ab\t"), st.sampled_from("xy")), max_size=30),
    st.sampled_from([1, 2, 64]),
    st.sampled_from([1, 3, 1 << 16]),
)
def test_first_occurrences_match_a_set_of_pairs(
    pairs: list[tuple[str, str]], buckets: int, chunk: int
) -> None:
    """Whatever the buckets the digests are spread over and the chunks they are made in."""
    seen: set[tuple[str, str]] = set()
    expected = []
    for pair in pairs:
        expected.append(pair not in seen)
        seen.add(pair)
    with patch.object(nmt_data, "DIGEST_CHUNK", chunk):
        assert first_occurrences(pairs, buckets).tolist() == expected


def test_overlap_counts_sources_targets_and_pairs() -> None:
    train = [("a", "A"), ("b", "B"), ("c", "C")]
    test = [("a", "A"), ("b", "X"), ("y", "C"), ("z", "Z"), ("a", "Q")]
    # train read once, as a stream: a repeated test source counts each time
    assert overlap(iter(train), test) == Overlap(source=3, target=2, pair=1)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=3, max_value=60),
    dev=st.integers(min_value=1, max_value=20),
    test=st.integers(min_value=1, max_value=20),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_held_out_positions_are_disjoint_seeded_samples(
    n: int, dev: int, test: int, seed: int
) -> None:
    if dev + test >= n:
        with pytest.raises(TokstudyError, match="leaves no training pairs"):
            held_out_positions(n, dev, test, seed)
        return
    dev_positions, test_positions = held_out_positions(n, dev, test, seed)
    assert (len(dev_positions), len(test_positions)) == (dev, test)
    assert not dev_positions & test_positions
    assert (dev_positions | test_positions) <= set(range(n))
    assert held_out_positions(n, dev, test, seed) == (dev_positions, test_positions)


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    sources = [f"sentence {i}" for i in range(40)] + ["", "sentence 3", "lonely"]
    targets = [f"वाक्य {i}" for i in range(40)] + ["orphan", "वाक्य 3", ""]
    return write_lines(tmp_path / "c.en", sources), write_lines(tmp_path / "c.mr", targets)


def test_split_corpus_writes_aligned_files_and_a_summary(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source, target = _corpus(tmp_path)
    config = SplitConfig(dev_size=5, test_size=6, seed=3)
    with caplog.at_level(logging.INFO, logger="tokstudy.nmt.data"):
        summary = split_corpus([source, target], ("en", "mr"), tmp_path / "out", config)
    assert "1 with only the en side empty, 1 with only the mr side empty, 1 dupl" in caplog.text
    assert summary["sizes"] == {"train": 29, "dev": 5, "test": 6}
    assert summary["cleaning"]["pairs_kept"] == 40
    assert json.loads((tmp_path / "out" / SUMMARY_FILE).read_text()) == summary
    for name in ("train", "dev", "test"):
        pairs = read_split(tmp_path / "out", name, ("en", "mr"))
        assert all(s.split()[1] == t.split()[1] for s, t in pairs)
    # by the recipe: the 40 kept pairs in corpus order, 11 positions drawn with Random(3)
    kept = [(f"sentence {i}", f"वाक्य {i}") for i in range(40)]
    picked = random.Random(3).sample(range(40), 11)
    expected = {
        "dev": [kept[i] for i in sorted(picked[:5])],
        "test": [kept[i] for i in sorted(picked[5:])],
        "train": [pair for i, pair in enumerate(kept) if i not in picked],
    }
    assert {name: read_split(tmp_path / "out", name, ("en", "mr")) for name in expected} == expected
    undeduplicated = split_corpus(
        [source, target], ("en", "mr"), tmp_path / "all", SplitConfig(5, 6, 3, deduplicate=False)
    )
    assert undeduplicated["cleaning"]["duplicates"] == 0
    assert undeduplicated["sizes"]["train"] == 30
    again = split_corpus([source, target], ("en", "mr"), tmp_path / "again", config)
    assert again["sizes"] == summary["sizes"]
    for name in ("train.en", "dev.mr", "test.en"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
    other = split_corpus(
        [source, target], ("en", "mr"), tmp_path / "other", SplitConfig(5, 6, seed=4)
    )
    assert other["sizes"] == summary["sizes"]
    assert (tmp_path / "other" / "test.en").read_text() != (
        tmp_path / "out" / "test.en"
    ).read_text()


@pytest.mark.shared
def test_split_of_the_real_en_mr_corpus(tmp_path: Path) -> None:
    summary = split_corpus(
        [HFT2022 / "en.txt.gz", HFT2022 / "mr.txt.gz"], ("en", "mr"), tmp_path, SplitConfig()
    )
    # the figures recounted with pandas from the files themselves (20 933 pairs, 2 without
    # English, 1 776 repeated: 17 155 + 1 000 + 1 000 kept)
    sides = []
    for language in ("en", "mr"):
        with gzip.open(HFT2022 / f"{language}.txt.gz", "rt", encoding="utf-8") as handle:
            sides.append([line.rstrip("\n").strip() for line in handle])
    frame = pd.DataFrame({"en": sides[0], "mr": sides[1]})
    both = (frame["en"] != "") & (frame["mr"] != "")
    kept = frame[both].drop_duplicates()
    cleaning = summary["cleaning"]
    assert cleaning["pairs_read"] == len(frame) == 20933
    assert cleaning["source_only_empty"] == ((frame["en"] == "") & (frame["mr"] != "")).sum()
    assert cleaning["duplicates"] == both.sum() - len(kept) == 1776
    assert summary["sizes"] == {"train": len(kept) - 2000, "dev": 1000, "test": 1000}
    # test sentences found in train, counted from the written split files
    split = {name: read_split(tmp_path, name, ("en", "mr")) for name in ("train", "test")}
    train_sources = {source for source, _ in split["train"]}
    in_train = sum(source in train_sources for source, _ in split["test"])
    assert summary["test_in_train"]["source"] == in_train
    assert summary["test_in_train"]["pair"] == len(set(split["test"]) & set(split["train"])) == 0


def test_nmt_config_reads_nested_sections_and_names_bad_keys() -> None:
    config = from_mapping(
        NMTConfig,
        {"tokenizers": ["sp_bpe", "hft"], "train": {"preset": "base", "lr": 1}, "seeds": [1, 2]},
        "nmt",
    )
    assert config.train.preset == "base" and config.train.lr == 1.0
    assert config.split.dev_size == 1000 and config.evaluation.baseline == "sp_bpe"
    with pytest.raises(TokstudyError, match=r"nmt\.train: unknown key\(s\) layers"):
        from_mapping(NMTConfig, {"train": {"layers": 3}}, "nmt")
    with pytest.raises(TokstudyError, match=r"nmt\.train\.preset must be one of tiny, base"):
        TrainConfig(preset="huge")
    with pytest.raises(
        TokstudyError, match=r"max_tokens \(100\) must be >= nmt\.train\.max_length"
    ):
        TrainConfig(max_tokens=100, max_length=200)
    with pytest.raises(TokstudyError, match=r"baseline 'sp_bpe' is not in nmt\.tokenizers"):
        NMTConfig(tokenizers=("hft",))
    with pytest.raises(TokstudyError, match="'en-fr' is not 'src-tgt'"):
        NMTConfig(directions=("en-fr",))
