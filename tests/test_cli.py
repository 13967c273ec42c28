"""The ``tokstudy metrics`` command and the checksum-verified download."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from tokstudy.cli import main
from tokstudy.corpora import download
from tokstudy.errors import TokstudyError
from tokstudy.metrics import compute_metrics
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.io import train_to_directory
from tokstudy.tokenizers.registry import load_tokenizer


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, english_corpus: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli")
    for name in ("sp_unigram", "hf_bpe"):
        train_to_directory(name, english_corpus, TrainSpec(300, label="en"), root / name)
    return {name: root / name for name in ("sp_unigram", "hf_bpe")}


@pytest.mark.parametrize(
    ("name", "file_name"),
    [("sp_unigram", "spm.model"), ("hf_bpe", "tokenizer.json"), ("hf_bpe", "")],
)
def test_metrics_cli_matches_the_workflow_numbers(
    trained: dict[str, Path],
    english_corpus: Path,
    tmp_path: Path,
    name: str,
    file_name: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    output = tmp_path / "m.csv"
    path = trained[name] / file_name if file_name else trained[name]
    assert (
        main(
            [
                "metrics",
                "--tokenizer",
                str(path),
                "--corpus",
                str(english_corpus),
                "--metric",
                "f95",
                "--metric",
                "mu",
                "--output",
                str(output),
            ]
        )
        == 0
    )
    table = pd.read_csv(output).set_index("metric")["value"]
    expected, _ = compute_metrics(load_tokenizer(trained[name]), english_corpus)
    assert table["mu"] == pytest.approx(expected["mu"]) and table["f95"] == expected["f95"]
    assert "mu" in capsys.readouterr().out


def test_metrics_cli_errors_are_one_line(
    trained: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            ["metrics", "--tokenizer", str(trained["hf_bpe"]), "--corpus", str(tmp_path / "no.txt")]
        )
        == 1
    )
    assert (
        capsys.readouterr().err.strip()
        == f"tokstudy: error: --corpus {tmp_path / 'no.txt'}: no such file"
    )
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["metrics", "--tokenizer", str(bad), "--corpus", str(bad)]) == 1
    assert "not a valid HF tokenizer.json" in capsys.readouterr().err


def test_download_verifies_the_checksum(tmp_path: Path) -> None:
    source = tmp_path / "remote.txt"
    source.write_bytes(b"real text\n")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    target = tmp_path / "xx.raw"
    download(source.as_uri(), digest, target, "xx")
    assert target.read_bytes() == b"real text\n"
    with pytest.raises(TokstudyError, match="'xx': checksum mismatch"):
        download(source.as_uri(), "0" * 64, tmp_path / "yy.raw", "xx")
    assert not (tmp_path / "yy.raw").exists()
