"""The Python API (``import tokstudy``): light to import, the study's numbers from text or
files, segmentations, a study's cells by key, and the correlation of a table of cells."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbclient
import nbformat
import numpy as np
import pandas as pd
import pytest
from conftest import REPO
from metrics_oracle import brute_force_metrics
from test_correlate_cli import FAST, downstream_table

import tokstudy
from tokstudy import api
from tokstudy.cli import main
from tokstudy.errors import TokstudyError
from tokstudy.workflow.code_fingerprint import CodeIndex


@pytest.fixture(scope="module")
def bpe(english_corpus: Path) -> tokstudy.api.Tokenizer:
    return tokstudy.train_tokenizer("hf_bpe", english_corpus, 300)


def test_import_tokstudy_is_light_and_gives_the_api_functions() -> None:
    code = (
        "import sys, tokstudy; "
        "print(sorted(m for m in ('pandas', 'torch', 'numpy', 'tokstudy.api') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"
    assert tokstudy.measure is api.measure and tokstudy.correlate is api.correlate
    assert {"load_tokenizer", "train_tokenizer", "measure", "segment", "correlate"} <= set(
        dir(tokstudy)
    )
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        tokstudy.nothing  # noqa: B018


def test_measure_on_lines_is_the_brute_force_count(bpe, english_lines: list[str]) -> None:
    lines = english_lines[:200]
    table = tokstudy.measure({"bpe": bpe}, lines)
    assert list(table.columns[:3]) == ["tokenizer", "texts", "vocab_size"]
    assert table[["tokenizer", "texts"]].values.tolist() == [["bpe", "text"]]
    expected = brute_force_metrics(bpe, lines)
    for metric, value in expected.items():
        assert table.loc[0, metric] == pytest.approx(value, rel=1e-12), metric


def test_measure_cleans_lines_as_a_file_and_the_command_line(bpe, tmp_path: Path, capsys) -> None:
    raw = ["\ufeffHello there, my friend.\r", "   ", "  How are you today?  ", "fine"]
    corpus = tmp_path / "raw.txt"
    corpus.write_text("\n".join(raw) + "\n", encoding="utf-8")
    folder = tmp_path / "tok"
    folder.mkdir()
    bpe.save(folder)
    named = tokstudy.measure(
        {"bpe": folder}, {"file": corpus, "lines": raw}, ["fertility", "mu", "lines"]
    )
    assert named["texts"].tolist() == ["file", "lines"]
    file_row, lines_row = named.drop(columns="texts").to_dict("records")
    assert file_row == lines_row and file_row["lines"] == 3
    clean = ["Hello there, my friend.", "How are you today?", "fine"]
    assert file_row["mu"] == pytest.approx(brute_force_metrics(bpe, clean)["mu"])
    out = tmp_path / "cli.csv"
    assert (
        main(["metrics", "--tokenizer", str(folder), "--corpus", str(corpus), "--output", str(out)])
        == 0
    )
    cli = pd.read_csv(out).set_index("metric")["value"]
    assert file_row["fertility"] == pytest.approx(cli["fertility"], rel=1e-12)


def test_measure_errors_are_one_line_naming_the_text(bpe, tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=r"texts /.*missing.txt: no such file"):
        tokstudy.measure(bpe, tmp_path / "missing.txt")
    with pytest.raises(TokstudyError, match=r"texts 'text': no lines after cleaning"):
        tokstudy.measure(bpe, ["  ", ""])
    with pytest.raises(TokstudyError, match="expected a file or a list of strings"):
        tokstudy.measure(bpe, [1, 2])
    with pytest.raises(TokstudyError, match=r"texts 'text': not Unicode text"):
        tokstudy.measure(bpe, ["a \ud800 b"])
    with pytest.raises(TokstudyError, match="unknown metric"):
        tokstudy.measure(bpe, ["a b"], ["fertlity"])
    with pytest.raises(TokstudyError, match="no such tokenizer"):
        tokstudy.measure(tmp_path / "nothing", ["a b"])


def test_segment_gives_the_tokens_of_each_line(bpe) -> None:
    text = "Hello there, my friend.\n\nHow are you?"
    table = tokstudy.segment({"bpe": bpe}, text)
    assert table["line"].tolist() == [0, 1]
    assert table["text"].tolist() == ["Hello there, my friend.", "How are you?"]
    assert table["ids"].tolist() == bpe.encode_batch(["Hello there, my friend.", "How are you?"])
    for row in table.itertuples():
        assert row.n_tokens == len(row.ids) == len(row.tokens)
        # the shown tokens, word marks read as spaces, spell the line
        assert "".join(row.tokens).replace("▁", " ").strip() == row.text


def test_a_trained_tokenizer_is_saved_and_found_by_its_cell_key(
    english_corpus: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    folder = results / "tokenizers" / "en" / "sp_unigram" / "200"
    trained = tokstudy.train_tokenizer("sp_unigram", english_corpus, 200, directory=folder)
    assert (folder / "meta.json").is_file() and (folder / "vocab.tsv").is_file()
    by_path = tokstudy.load_tokenizer(folder)
    by_key = tokstudy.load_tokenizer("en|sp_unigram|200", results=results)
    assert by_path.vocab == by_key.vocab == trained.vocab
    with pytest.raises(TokstudyError, match=r"no cell 'en\|sp_unigram\|300'.*en\|sp_unigram\|200"):
        tokstudy.load_tokenizer("en|sp_unigram|300", results=results)
    with pytest.raises(TokstudyError, match="no such results folder"):
        tokstudy.load_tokenizer("en|sp_unigram|200", results=tmp_path / "none")


def test_correlate_a_data_frame_as_the_command_line_does(tmp_path: Path) -> None:
    table = downstream_table()
    cells = tmp_path / "cells.csv"
    table.to_csv(cells, index=False)
    scores = "mlm_bits_per_char,pos_accuracy"
    assert main(["correlate", str(cells), "--out", str(tmp_path), *FAST, "--scores", scores]) == 0
    result = tokstudy.correlate(table, scores.split(","), bootstrap_samples=20, permutations=200)
    cli = pd.read_csv(tmp_path / "correlation.csv")
    ours = result.table.reset_index(drop=True)
    assert list(ours.columns) == list(cli.columns) and len(ours) == len(cli) > 0
    for column in ("partial_spearman", "partial_low", "partial_high", "p_within_size"):
        assert np.allclose(ours[column].astype(float), cli[column], rtol=1e-5, equal_nan=True)
    with pytest.raises(TokstudyError, match=r"cells: .*vocab_size"):
        tokstudy.correlate(table.drop(columns="vocab_size"), ["pos_accuracy"])


@pytest.mark.slow
def test_the_notebook_example_runs(tmp_path: Path) -> None:
    notebook = nbformat.read(REPO / "docs" / "api.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3").execute(cwd=str(tmp_path))
    outputs = [
        output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    ]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("fertility" in str(o.get("data", {})) for o in outputs)


#: what an earlier build left in the tree (an egg-info's file list would add files itself)
BUILD_LEFTOVERS = shutil.ignore_patterns("*.egg-info", "__pycache__")


@pytest.mark.slow
def test_a_built_wheel_carries_the_schema_and_the_page_template(tmp_path: Path) -> None:
    # what a plain `pip install .` installs: the files the package reads at run time are
    # in the wheel as files of their own (the schema is a link in the source tree); built
    # from a copy, since setuptools writes build/ into the tree it builds
    source = tmp_path / "source"
    for part in ("pyproject.toml", "README.md", "src", "workflow/schemas"):
        (source / part).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, source / part, symlinks=True, ignore=BUILD_LEFTOVERS)
        else:
            shutil.copy(REPO / part, source / part)
    assert (source / "src/tokstudy/workflow/config.schema.yaml").is_symlink()
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*pip, "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("tokstudy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        schema = archive.read("tokstudy/workflow/config.schema.yaml")
        template = archive.read("tokstudy/report/page/template.html")
    assert schema == (REPO / "workflow/schemas/config.schema.yaml").read_bytes()
    assert template == (REPO / "src/tokstudy/report/page/template.html").read_bytes()
    from tokstudy.cli import DEFAULT_SCHEMA

    assert DEFAULT_SCHEMA.parent == REPO / "src/tokstudy/workflow"


def test_the_api_is_no_part_of_a_workflow_steps_code() -> None:
    # importing any step runs tokstudy/__init__.py, whose lazy __getattr__ names the API:
    # were that a fingerprinted import, an API change would rerun every job of every study
    index = CodeIndex(REPO / "src" / "tokstudy")
    for step in (
        "tokstudy.corpora.prepare:prepare_language",
        "tokstudy.workflow.cell_job:train_cell",
        "tokstudy.report.page.build:write_study_page",
    ):
        modules = index.covered(step)[1]
        assert "tokstudy" in modules and "tokstudy.api" not in modules, step
    assert (
        "tokstudy.report.page.uncertainty"
        not in index.covered("tokstudy.corpora.prepare:prepare_language")[1]
    )
