"""The ``tokstudy metrics`` command and the checksum-verified download."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import write_lines
from metrics_oracle import brute_force_metrics

from tokstudy.cli import main
from tokstudy.corpora.prepare import download
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
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
    lines = english_corpus.read_text(encoding="utf-8").splitlines()
    expected = brute_force_metrics(load_tokenizer(trained[name]), lines)
    assert list(table.index) == ["f95", "mu"]
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


def _metrics(tokenizer: Path, corpus: Path, *extra: str) -> int:
    return main(["metrics", "--tokenizer", str(tokenizer), "--corpus", str(corpus), *extra])


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tokstudy: error: "), err
    return err[0]


def test_metrics_cli_cleans_crlf_and_bom_as_the_workflow_does(
    trained: dict[str, Path], english_corpus: Path, tmp_path: Path
) -> None:
    lines = english_corpus.read_text(encoding="utf-8").splitlines()[:300]
    windows = tmp_path / "windows.txt"
    windows.write_bytes("\ufeff".encode() + "".join(f"{line}\r\n" for line in lines).encode())
    prepared = write_lines(tmp_path / "prepared.txt", lines)
    output = tmp_path / "m.csv"
    assert _metrics(trained["sp_unigram"], windows, "--output", str(output)) == 0
    table = pd.read_csv(output).set_index("metric")["value"]
    assert _metrics(trained["sp_unigram"], prepared, "--output", str(tmp_path / "p.csv")) == 0
    # the same figures as on the file that prepare_corpus would have written
    assert pd.read_csv(tmp_path / "p.csv").set_index("metric")["value"].equals(table)
    expected = brute_force_metrics(load_tokenizer(trained["sp_unigram"]), lines)
    assert table["lines"] == expected["lines"] == 300
    for name, value in expected.items():
        assert table[name] == pytest.approx(value), name


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("blank", b"\n   \n\r\n\t\n", r"no lines after cleaning \(4 read, all empty\)"),
        ("invalid", b"fine\nbad \xff here\n", r"invalid UTF-8 at line 2 \(byte 4\)"),
        ("utf16", "one line\n".encode("utf-16"), r"invalid UTF-8 at line 1 \(byte 0\)"),
        ("binary", bytes(range(256)) * 4, r"(invalid UTF-8|NUL byte) at line 1"),
        ("nul", b"text\nnul\x00\n", r"NUL byte at line 2"),
    ],
)
def test_metrics_cli_refuses_what_prepare_corpus_refuses_in_one_line(
    trained: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes,
    message: str,
) -> None:
    corpus = tmp_path / f"{name}.bin"
    corpus.write_bytes(content)
    assert _metrics(trained["hf_bpe"], corpus) == 1
    line = _one_error_line(capsys)
    assert str(corpus) in line and re.search(message, line), line


def test_metrics_cli_names_a_directory_without_a_tokenizer(
    english_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _metrics(tmp_path, english_corpus) == 1
    line = _one_error_line(capsys)
    assert f"--tokenizer {tmp_path}: a directory without a tokenizer" in line
    assert "no such" not in line


def test_metrics_cli_refuses_batch_lines_below_one(
    trained: dict[str, Path], english_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _metrics(trained["hf_bpe"], english_corpus, "--batch-lines", "0") == 1
    assert "--batch-lines must be at least 1, got 0" in _one_error_line(capsys)


def test_check_config_names_file_and_line_of_malformed_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        "languages: {en: {chatterbot: english}}\ntokenizers: {char: {}}\nmetrics: [mu]\n",
        encoding="utf-8",
    )
    assert main(["check-config", str(good)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{good}: ok"  # then the machine's fit
    bad = tmp_path / "bad.yaml"
    bad.write_text("languages:\n  en: {chatterbot: english\ntokenizers: {}\n", encoding="utf-8")
    assert main(["check-config", str(bad)]) == 1
    line = _one_error_line(capsys)
    assert line.startswith(f"tokstudy: error: config file {bad}: line 3, column 11: ")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(good.read_text() + "colour: blue\n", encoding="utf-8")
    assert main(["check-config", str(unknown)]) == 1
    assert "('colour' was unexpected); valid keys: analyses" in _one_error_line(capsys)


@pytest.mark.parametrize(
    ("name", "file_name"), [("sp_unigram", "meta.json"), ("sp_unigram", "spm.model")]
)
def test_metrics_cli_names_a_corrupt_tokenizer(
    trained: dict[str, Path],
    english_corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    file_name: str,
) -> None:
    copy = tmp_path / name
    shutil.copytree(trained[name], copy)
    (copy / file_name).write_bytes(b"{truncated")
    assert _metrics(copy, english_corpus) == 1
    assert str(copy) in _one_error_line(capsys)


def test_metrics_cli_splits_long_lines_and_says_so(
    trained: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "long.txt"
    corpus.write_text("short line\n" + "word " * 100 + "\n", encoding="utf-8")
    output = tmp_path / "m.csv"
    options = ("--max-line-bytes", "200", "--output", str(output))
    assert _metrics(trained["hf_bpe"], corpus, *options) == 0
    assert pd.read_csv(output).set_index("metric")["value"]["lines"] == 1 + 3
    assert f"note: --corpus {corpus}: long_lines_split 1, long_line_pieces 3" in (
        capsys.readouterr().err
    )


def test_metrics_never_overwrites_its_input(
    trained: dict[str, Path], english_corpus: Path, tmp_path: Path, capsys
) -> None:
    victim = tmp_path / "victim.txt"
    shutil.copy(english_corpus, victim)
    before = victim.read_bytes()
    assert _metrics(trained["hf_bpe"], victim, "--output", str(victim)) == 1
    assert f"--output {victim}: is the input {victim}" in _one_error_line(capsys)
    assert victim.read_bytes() == before
    inside = trained["hf_bpe"] / "m.csv"
    assert _metrics(trained["hf_bpe"], victim, "--output", str(inside)) == 1
    assert "it would be overwritten" in _one_error_line(capsys)
    assert not inside.exists()


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (lambda tmp: tmp, "is a directory, expected a file name"),
        (lambda tmp: tmp / "missing" / "m.csv", "missing does not exist"),
    ],
)
def test_metrics_output_checked_before_any_work(
    trained: dict[str, Path], english_corpus: Path, tmp_path: Path, capsys, output, message
) -> None:
    assert _metrics(trained["hf_bpe"], english_corpus, "--output", str(output(tmp_path))) == 1
    line = _one_error_line(capsys)
    assert line.startswith(f"tokstudy: error: --output {output(tmp_path)}") and message in line


def test_metrics_replaces_an_existing_output_atomically(
    trained: dict[str, Path], english_corpus: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.csv"
    output.write_text("old\n", encoding="utf-8")
    assert _metrics(trained["hf_bpe"], english_corpus, "--output", str(output)) == 0
    assert pd.read_csv(output)["metric"].tolist()[0] == "f95"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]  # no temporary file left


@pytest.mark.parametrize(
    ("corpus", "message"),
    [
        (lambda tmp: tmp, "is a directory, expected a text file"),
        (lambda tmp: Path("/dev/zero"), "is a device, expected a text file"),
    ],
)
def test_metrics_names_a_corpus_that_is_no_text_file(
    trained: dict[str, Path], tmp_path: Path, capsys, corpus, message
) -> None:
    assert _metrics(trained["hf_bpe"], corpus(tmp_path)) == 1
    assert f"--corpus {corpus(tmp_path)}: {message}" in _one_error_line(capsys)
