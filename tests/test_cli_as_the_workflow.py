"""The command line says and computes what the workflow does (issue 54): ``metrics
--normalize`` with the workflow's own cleaning, the ``kind`` of a pretrained file, the
invalid-UTF-8 hint in the words of each (flag, config key), ``correlate`` refusing a
duplicated column, and docs/clusters.md on ``snakemake --unlock``."""

from __future__ import annotations

import shutil
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, write_lines
from test_correlate_cli import downstream_table

from tokstudy.cli import main
from tokstudy.corpora.prepare import prepare_corpus
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory

#: U+FDFA, one character that NFKC spells as 18 (ﷺ: "صلى الله عليه وسلم")
LIGATURE = "\ufdfa"


@pytest.fixture(scope="module")
def hf_bpe(tmp_path_factory: pytest.TempPathFactory, english_corpus: Path) -> Path:
    folder = tmp_path_factory.mktemp("cli54") / "hf_bpe"
    train_to_directory("hf_bpe", english_corpus, TrainSpec(300, label="en"), folder)
    return folder


def _table(tokenizer: Path, corpus: Path, output: Path, *extra: str) -> pd.DataFrame:
    arguments = ["metrics", "--tokenizer", str(tokenizer), "--corpus", str(corpus)]
    assert main([*arguments, "--output", str(output), *extra]) == 0
    return pd.read_csv(output)


def _values(table: pd.DataFrame) -> pd.Series:
    return table.set_index("metric")["value"]


def test_normalize_nfkc_scores_the_text_as_the_workflow_prepares_it(
    hf_bpe: Path, tmp_path: Path, english_lines: list[str]
) -> None:
    lines = [f"{line} {LIGATURE}" for line in english_lines[:200]]
    raw = write_lines(tmp_path / "raw.txt", lines)
    by_hand = write_lines(
        tmp_path / "nfkc.txt", [unicodedata.normalize("NFKC", line) for line in lines]
    )
    normalized = _values(_table(hf_bpe, raw, tmp_path / "a.csv", "--normalize", "nfkc"))
    oracle = _values(_table(hf_bpe, by_hand, tmp_path / "b.csv"))
    pd.testing.assert_series_equal(normalized, oracle)
    unchanged = _values(_table(hf_bpe, raw, tmp_path / "c.csv", "--normalize", "none"))
    assert unchanged["words"] < normalized["words"]  # the ligature is four words in NFKC
    # and the workflow's own preparation of the same file gives the same training text
    prepare_corpus(
        [raw],
        tmp_path / "train.txt",
        tmp_path / "heldout.txt",
        tmp_path / "stats.json",
        label="xx",
        heldout=1,
        seed=0,
        normalize="nfkc",
    )
    prepared = (tmp_path / "train.txt").read_text(encoding="utf-8").splitlines()
    assert set(prepared) <= set(by_hand.read_text(encoding="utf-8").splitlines())


def test_a_pretrained_tokenizer_json_is_of_kind_pretrained(
    hf_bpe: Path, tmp_path: Path, english_corpus: Path
) -> None:
    file = tmp_path / "tokenizer.json"
    shutil.copyfile(hf_bpe / "tokenizer.json", file)
    assert set(_table(file, english_corpus, tmp_path / "p.csv")["kind"]) == {"pretrained"}
    assert set(_table(hf_bpe, english_corpus, tmp_path / "t.csv")["kind"]) == {"trained"}


def test_the_invalid_utf8_hint_names_the_flag_in_the_cli_and_the_key_in_the_workflow(
    hf_bpe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nbad \xff here\n")
    assert main(["metrics", "--tokenizer", str(hf_bpe), "--corpus", str(bad)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("run with --on-invalid-utf8 replace to substitute U+FFFD")
    assert "on_invalid_utf8:" not in line
    with pytest.raises(TokstudyError) as error:
        prepare_corpus(
            [bad],
            tmp_path / "t.txt",
            tmp_path / "h.txt",
            tmp_path / "s.json",
            label="xx",
            heldout=1,
            seed=0,
        )
    assert str(error.value).endswith(
        "set languages.xx.on_invalid_utf8 (or corpus_defaults.on_invalid_utf8): replace to "
        "substitute U+FFFD"
    )
    assert "--on-invalid-utf8" not in str(error.value)


def test_correlate_refuses_a_column_named_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = downstream_table()
    table.insert(5, "mu_heldout_copy", table["mu_heldout"])
    cells = tmp_path / "cells.csv"
    table.to_csv(cells, index=False)
    header, rest = cells.read_text(encoding="utf-8").split("\n", 1)
    cells.write_text(header.replace("mu_heldout_copy", "mu_heldout") + "\n" + rest, "utf-8")
    arguments = ["correlate", str(cells), "--scores", "pos_accuracy", "--out", str(tmp_path)]
    assert main(arguments) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"tokstudy: error: {cells}: column 'mu_heldout' appears twice in the header"
    assert not (tmp_path / "correlation.csv").exists()


def test_the_cluster_guide_says_when_snakemake_unlock_is_needed() -> None:
    guide = (REPO / "docs" / "clusters.md").read_text(encoding="utf-8")
    section = guide.split("#### When `snakemake --unlock` is needed", 1)[1].split("\n### ")[0]
    assert "Directory cannot be locked" in section and "--rerun-incomplete" in section
    assert "SIGKILL" in section
