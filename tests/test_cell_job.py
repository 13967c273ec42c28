"""One job per trained cell (:func:`tokstudy.workflow.cell_job.train_and_evaluate`): the same files
and metrics as training (:func:`train_to_directory`) then scoring the saved directory
(:func:`evaluate_job`) in two processes, with the training text encoded once; and the cost
of its phases (:mod:`tokstudy.runtime.job_cost`)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import write_lines
from metrics_oracle import brute_force_metrics

from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import compute_metrics
from tokstudy.runtime.job_cost import FIGURES, read_phase_costs
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.directory import read_meta
from tokstudy.tokenizers.registry import adapter_class, load_tokenizer
from tokstudy.workflow.cell_job import CellOutputs, evaluate_job, train_and_evaluate

# one adapter of each library and trainer family (hf_wordpiece trains nondeterministically)
CELL_ADAPTERS = ["sp_unigram", "hf_unigram", "bbpe", "hft", "char"]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory, english_lines: list[str]) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cell_corpora")
    return {
        "train": write_lines(folder / "train.txt", english_lines[:1500]),
        "heldout": write_lines(folder / "heldout.txt", english_lines[1500:1700]),
    }


def _spec(name: str) -> TrainSpec:
    size = 300 if adapter_class(name).sized else None
    return TrainSpec(size, seed=3, label="en", size_policy="adjust")


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.parametrize("name", CELL_ADAPTERS)
def test_one_cell_job_writes_what_training_then_scoring_wrote(
    name: str, corpora: dict[str, Path], tmp_path: Path
) -> None:
    two = tmp_path / "two_jobs"
    train_to_directory(name, corpora["train"], _spec(name), two / "tokenizer")
    evaluate_job(two / "tokenizer", corpora, two / "metrics.tsv", two / "frequencies.tsv")
    one = tmp_path / "one_job"
    train_and_evaluate(
        name,
        corpora,
        _spec(name),
        CellOutputs(
            one / "tokenizer", one / "metrics.tsv", one / "frequencies.tsv", one / "cost.json"
        ),
    )
    assert _files(one / "tokenizer") == _files(two / "tokenizer")  # vocab.tsv, meta.json too
    for table in ("metrics.tsv", "frequencies.tsv"):
        assert (one / table).read_bytes() == (two / table).read_bytes(), table
    vocab = pd.read_csv(
        one / "tokenizer" / "vocab.tsv", sep="\t", header=None, quoting=3, keep_default_na=False
    )
    frequencies = pd.read_csv(one / "frequencies.tsv", sep="\t")
    assert vocab[1].tolist() == frequencies["train_frequency"].tolist()
    # the figures themselves, against the ids of the lines counted by hand
    tokenizer = load_tokenizer(one / "tokenizer")
    metrics = pd.read_csv(one / "metrics.tsv", sep="\t")
    for split, corpus in corpora.items():
        lines = corpus.read_text(encoding="utf-8").splitlines()
        counts = Counter(i for ids in tokenizer.encode_batch(lines) for i in ids)
        column = frequencies[f"{split}_frequency"]
        assert column.tolist() == [counts[i] for i in range(len(tokenizer.vocab))], split
        values = metrics[metrics["split"] == split].set_index("metric")["value"]
        for metric, expected in brute_force_metrics(tokenizer, lines).items():
            assert values[metric] == pytest.approx(expected), (split, metric)
    phases = read_phase_costs(one / "cost.json")
    assert list(phases) == ["train", "metrics"]
    assert all(figures["seconds"] > 0 for figures in phases.values())
    # a peak never falls, but Linux syncs each thread's RSS counter lazily (up to 64 pages
    # a thread), so VmHWM read later can come out a fraction of a MiB lower
    assert phases["metrics"]["max_rss_mb"] >= phases["train"]["max_rss_mb"] - 1
    assert phases["train"]["max_rss_mb"] > 10


def test_the_train_pass_is_the_only_encoding_of_the_training_text(
    corpora: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tokstudy.workflow.cell_job as cell_job

    passes = []

    def counted(tokenizer, corpus, *args):
        passes.append(Path(corpus).name)
        return compute_metrics(tokenizer, corpus, *args)

    monkeypatch.setattr(cell_job, "compute_metrics", counted)
    train_and_evaluate(
        "sp_bpe",
        corpora,
        _spec("sp_bpe"),
        CellOutputs(
            tmp_path / "tokenizer",
            tmp_path / "metrics.tsv",
            tmp_path / "frequencies.tsv",
            tmp_path / "cost.json",
        ),
    )
    assert passes == ["train.txt", "heldout.txt"]


def _cell(name: str, corpora: dict[str, Path], folder: Path, training_code: str, **spec) -> str:
    """Run a cell job into ``folder`` as the workflow does (a kept tokenizer folder and cost
    file); its log."""
    import logging

    stream = __import__("io").StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("tokstudy")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        train_and_evaluate(
            name,
            corpora,
            TrainSpec(**{"vocab_size": 300, "seed": 3, "label": "en", **spec}),
            CellOutputs(
                folder / "tokenizer",
                folder / "metrics.tsv",
                folder / "frequencies.tsv",
                folder / "cost.json",
            ),
            {"step": "tokstudy.workflow.cell_job:train_cell", "fingerprint": "s1"},
            training_code,
        )
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def _model(folder: Path) -> tuple[bytes, int]:
    path = folder / "tokenizer" / "spm.model"
    return path.read_bytes(), path.stat().st_mtime_ns


def test_a_cell_job_reuses_a_tokenizer_trained_from_the_same_code_settings_and_text(
    corpora: dict[str, Path], tmp_path: Path
) -> None:
    first = _cell("sp_bpe", corpora, tmp_path, "t1")
    assert "reusing" not in first and "training sp_bpe" in first
    model, files = _model(tmp_path), _files(tmp_path / "tokenizer")
    cost = read_phase_costs(tmp_path / "cost.json")
    meta = json.loads((tmp_path / "tokenizer" / "meta.json").read_text(encoding="utf-8"))
    assert meta["training"] == {
        "code": "t1",
        "text_sha256": hashlib.sha256(corpora["train"].read_bytes()).hexdigest(),
    }
    assert meta["code"] == {
        "step": "tokstudy.workflow.cell_job:train_cell",
        "fingerprint": "s1",
    }
    (tmp_path / "tokenizer" / ".snakemake_timestamp").write_text("", encoding="utf-8")
    again = _cell("sp_bpe", corpora, tmp_path, "t1")
    assert f"reusing the tokenizer in {tmp_path / 'tokenizer'}" in again
    assert "training sp_bpe" not in again
    assert _model(tmp_path) == model  # not written again
    assert _files(tmp_path / "tokenizer") == {**files, ".snakemake_timestamp": b""}
    assert read_phase_costs(tmp_path / "cost.json")["train"] == cost["train"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("code", "its training changed"),
        ("seed", "its seed changed"),
        ("text", "its training changed"),
        ("damaged", "corrupt (SHA-256 differs"),
        ("no cost", "not a readable phase cost file"),
    ],
)
def test_a_cell_job_retrains_when_anything_its_training_used_changed(
    corpora: dict[str, Path], tmp_path: Path, change: str, reason: str
) -> None:
    _cell("sp_bpe", corpora, tmp_path, "t1")
    model = _model(tmp_path)
    code, spec, texts = "t1", {}, dict(corpora)
    if change == "code":
        code = "t2"
    elif change == "seed":
        spec = {"seed": 4}
    elif change == "text":
        texts["train"] = write_lines(
            tmp_path / "other.txt", corpora["train"].read_text().split("\n")[:-2]
        )
    elif change == "damaged":
        with open(tmp_path / "tokenizer" / "spm.model", "ab") as handle:
            handle.write(b"damage")
    else:
        (tmp_path / "cost.json").unlink()
    log = _cell("sp_bpe", texts, tmp_path, code, **spec)
    assert "reusing" not in log and reason in log and "training sp_bpe" in log
    if change in ("code", "damaged", "no cost"):  # the same training again
        assert _model(tmp_path)[0] == model[0]
    assert read_meta(tmp_path / "tokenizer")["training"]["code"] == code


PHASES_IN_A_FRESH_PROCESS = """
import sys
import numpy as np
from tokstudy.runtime.job_cost import PhaseCosts

costs = PhaseCosts()
with costs.phase("small"):
    sum(range(200_000))
with costs.phase("big"):
    block = np.ones(200_000_000, dtype=np.int8)  # 200 MB touched
    del block
with costs.phase("compile"):
    from tokstudy.runtime.jit import njit

    @njit
    def add(a, b):
        return a + b

    add(1, 2)
with costs.phase("compiled"):
    add(3, 4)
costs.write(sys.argv[1])
"""


def test_phase_costs_measure_time_and_peak_memory(tmp_path: Path) -> None:
    # a fresh process started by this big one (the suite's): its own peak, not the parent's
    # (getrusage's ru_maxrss survives exec); the block is well above the imports' own peak
    subprocess.run(
        [sys.executable, "-c", PHASES_IN_A_FRESH_PROCESS, str(tmp_path / "cost.json")], check=True
    )
    phases = read_phase_costs(tmp_path / "cost.json")
    assert list(phases) == ["small", "big", "compile", "compiled"]
    assert set(phases["big"]) == set(FIGURES)
    assert phases["small"]["cpu_seconds"] > 0 and phases["small"]["seconds"] > 0
    assert phases["big"]["max_rss_mb"] >= phases["small"]["max_rss_mb"] + 100
    # numba's compilation is its own figure: only where a kernel was compiled, within the
    # phase's time; importing numba and calling a compiled kernel are not compilation
    compiling = {name: figures["compile_seconds"] for name, figures in phases.items()}
    assert compiling["small"] == compiling["big"] == compiling["compiled"] == 0
    assert 0 < compiling["compile"] < phases["compile"]["seconds"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a readable phase cost file"),
        (json.dumps({"train": {"seconds": 1.0}}), "not a phase cost file"),
        (json.dumps({"train": {"seconds": "1", "cpu_seconds": 1, "max_rss_mb": 2}}), "not a"),
        (json.dumps([1, 2]), "not a phase cost file"),
    ],
)
def test_a_bad_phase_cost_file_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "cost.json"
    path.write_text(content)
    with pytest.raises(TokstudyError, match=message) as error:
        read_phase_costs(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
