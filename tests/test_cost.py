"""The cost table from Snakemake benchmark files (written here by Snakemake's own writer) and
the phase files of the cell jobs."""

from __future__ import annotations

import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import logged
from figures import capture_figures, lines_of, texts_outside, tick_labels, visible_axes
from matplotlib.image import imread
from snakemake.benchmark import BenchmarkRecord, write_benchmark_records

from tokstudy.errors import TokstudyError
from tokstudy.report import plots
from tokstudy.report.cost import COLUMNS, CostSource, cost_table, read_benchmark, write_cost
from tokstudy.report.plots import plotted_costs
from tokstudy.runtime.job_cost import FIGURES, PhaseCosts
from tokstudy.tokenizers.registry import ADAPTERS


def benchmark_file(path: Path, *runs: tuple[float, float | None, float | None]) -> Path:
    """A benchmark TSV of (seconds, peak RSS MB, CPU seconds) runs; None: not sampled."""
    records = []
    for seconds, rss, cpu in runs:
        record = BenchmarkRecord(running_time=seconds, max_rss=rss, cpu_time=cpu)
        record.data_collected = rss is not None
        records.append(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_benchmark_records(records, str(path), False)
    return path


def text_file(path: Path, size: int) -> Path:
    path.write_bytes(b"x" * size)
    return path


@pytest.fixture
def texts(tmp_path: Path) -> tuple[Path, Path]:
    return text_file(tmp_path / "train.txt", 3_000_000), text_file(tmp_path / "held.txt", 1_000_000)


def source(tmp_path: Path, size: str, step: str, texts: tuple[Path, ...], *runs) -> CostSource:
    path = benchmark_file(tmp_path / "benchmarks" / step / f"{size}.tsv", *runs)
    return CostSource("en", "sp_bpe", size, int(size), step, path, texts)


def test_table_rows_from_benchmarks(tmp_path: Path, texts: tuple[Path, Path]) -> None:
    train, heldout = texts
    sources = [
        source(tmp_path, "4000", "metrics", (train, heldout), (2.0, 150.0, 1.75)),
        source(tmp_path, "4000", "train", (train,), (5.0, 300.25, 4.5)),
        source(tmp_path, "500", "train", (train,), (1.0, 100.0, 0.75)),
    ]
    table = cost_table(sources)
    assert list(table.columns) == COLUMNS
    assert list(zip(table["size"], table["step"], strict=True)) == [
        ("500", "train"),
        ("4000", "metrics"),
        ("4000", "train"),
    ]
    metrics = table.iloc[1]
    assert metrics["seconds"] == 2.0 and metrics["cpu_seconds"] == 1.75
    assert metrics["max_rss_mb"] == 150.0
    assert metrics["text_mb"] == pytest.approx(4.0)
    assert metrics["encode_mb_s"] == pytest.approx(2.0)
    trained = table.iloc[2]
    assert trained["max_rss_mb"] == 300.25 and trained["text_mb"] == pytest.approx(3.0)
    assert math.isnan(trained["encode_mb_s"])


def phase_file(path: Path, phases: dict[str, tuple[float, ...]]) -> Path:
    """A job's phase cost file: phase → (seconds, CPU seconds, peak RSS MB, compile seconds)."""
    costs = PhaseCosts()
    costs.phases = {
        name: dict(zip(FIGURES, figures, strict=True)) for name, figures in phases.items()
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    costs.write(path)
    return path


def test_a_trained_cell_has_phase_rows_and_a_job_row(
    tmp_path: Path, texts: tuple[Path, Path]
) -> None:
    train, _ = texts
    phases = phase_file(
        tmp_path / "costs/en/sp_bpe/4000.json",
        {"train": (1.5, 1.25, 200.0, 0.0), "metrics": (0.75, 0.75, 250.0, 0.25)},
    )
    job = benchmark_file(tmp_path / "benchmarks/job.tsv", (4.0, 260.0, 3.0))
    table = cost_table(
        [
            CostSource("en", "sp_bpe", "4000", 4000, "train", phases, (train,)),
            CostSource("en", "sp_bpe", "4000", 4000, "metrics", phases, texts),
            CostSource("en", "sp_bpe", "4000", 4000, "job", job, texts),
        ]
    ).set_index("step")
    assert table.index.tolist() == ["job", "metrics", "train"]
    assert table.loc["train", ["seconds", "cpu_seconds", "max_rss_mb"]].tolist() == [
        1.5,
        1.25,
        200.0,
    ]
    # the metric pass's throughput leaves out its numba compilation (0.25 of its 0.75 s)
    assert table.loc["metrics", "compile_seconds"] == 0.25
    assert table.loc["metrics", "encode_mb_s"] == pytest.approx(4.0 / 0.5)
    assert table.loc["job", "seconds"] == 4.0 and math.isnan(table.loc["job", "encode_mb_s"])
    assert math.isnan(table.loc["job", "compile_seconds"])
    assert math.isnan(table.loc["train", "encode_mb_s"])


def test_a_phase_file_from_before_compile_seconds_reads_as_unknown(
    tmp_path: Path, texts: tuple[Path, Path]
) -> None:
    older = tmp_path / "cost.json"
    older.write_text(json.dumps({"train": {"seconds": 2.0, "cpu_seconds": 2.0, "max_rss_mb": 9}}))
    row = cost_table([CostSource("en", "sp_bpe", "500", 500, "train", older, texts[:1])]).iloc[0]
    assert row["seconds"] == 2.0 and math.isnan(row["compile_seconds"])


def test_compilation_is_counted_and_left_out_of_the_plot(
    tmp_path: Path, texts: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    sources = [
        CostSource(
            "en",
            "hft",
            size,
            int(size),
            "train",
            phase_file(tmp_path / f"{size}.json", {"train": (seconds, seconds, 9.0, compiling)}),
            texts[:1],
        )
        for size, seconds, compiling in [("500", 12.0, 11.0), ("4000", 2.0, 0.5), ("8000", 3, 0.0)]
    ]
    with caplog.at_level(logging.INFO):
        table = write_cost(sources, tmp_path / "cost.csv", [tmp_path / "cost.png"])
    assert table["seconds"].tolist() == [12.0, 2.0, 3.0]
    messages = logged(caplog, "tokstudy.report.cost")
    assert messages[0] == (
        "2 step(s) include 11.5 s of numba compiling kernels not yet in its disk cache "
        "(a one-off of a fresh checkout): column compile_seconds, left out of the plot"
    )
    assert messages[1] == f"cost rows (3) written to {tmp_path / 'cost.csv'}"
    assert plotted_costs(table)["seconds"].tolist() == [1.0, 1.5, 3.0]


def test_a_phase_the_file_lacks_is_named(tmp_path: Path, texts: tuple[Path, Path]) -> None:
    phases = phase_file(tmp_path / "cost.json", {"train": (1.0, 1.0, 10.0, 0.0)})
    with pytest.raises(TokstudyError, match="no phase 'metrics'") as error:
        cost_table([CostSource("en", "sp_bpe", "500", 500, "metrics", phases, texts)])
    assert str(phases) in str(error.value)


def test_unsampled_job_keeps_its_time_and_is_logged(
    tmp_path: Path, texts: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    fast = source(tmp_path, "500", "train", texts[:1], (0.3, None, None))
    assert "NA" in fast.figures.read_text()
    with caplog.at_level(logging.INFO):
        row = cost_table([fast]).iloc[0]
    assert row["seconds"] == 0.3
    assert math.isnan(row["max_rss_mb"]) and math.isnan(row["cpu_seconds"])
    assert logged(caplog, "tokstudy.report.cost") == [
        "1 of 1 jobs ended before Snakemake's first memory sample: "
        "cpu_seconds and max_rss_mb left empty for them"
    ]


def test_a_dash_in_a_benchmark_is_not_measured(tmp_path: Path) -> None:
    path = tmp_path / "b.tsv"
    path.write_text("s\th:m:s\tmax_rss\tcpu_time\n0.2\t0:00:00\t-\tNA\n")
    figures = read_benchmark(path)
    assert figures["seconds"] == 0.2
    assert math.isnan(figures["max_rss_mb"]) and math.isnan(figures["cpu_seconds"])


def test_rows_are_sorted_by_language_tokenizer_numeric_size_and_step(tmp_path: Path) -> None:
    phases = phase_file(tmp_path / "cost.json", {"train": (1.0, 1.0, 10.0, 0.0)})
    cells = [("is", "char", "full", None), ("en", "sp_bpe", "full", None)]
    cells += [("en", "sp_bpe", "4000", 4000), ("en", "sp_bpe", "500", 500)]
    cells += [("en", "hf_bpe", "8000", 8000)]
    table = cost_table([CostSource(*cell, "train", phases, ()) for cell in cells])
    assert list(zip(table["language"], table["tokenizer"], table["size"], strict=True)) == [
        ("en", "hf_bpe", "8000"),
        ("en", "sp_bpe", "500"),
        ("en", "sp_bpe", "4000"),
        ("en", "sp_bpe", "full"),
        ("is", "char", "full"),
    ]


def test_the_csv_has_six_significant_digits(tmp_path: Path) -> None:
    phases = phase_file(tmp_path / "cost.json", {"metrics": (3.0, 2.0, 10.0, 0.0)})
    text = text_file(tmp_path / "t.txt", 7)  # 7e-06 MB in 3 s: 2.3333...e-06 MB/s
    write_cost(
        [CostSource("en", "sp_bpe", "500", 500, "metrics", phases, (text,))],
        tmp_path / "cost.csv",
        [tmp_path / "cost.png"],
    )
    assert (tmp_path / "cost.csv").read_text().splitlines() == [
        ",".join(COLUMNS),
        "en,sp_bpe,500,500,metrics,3,2,10,0,7e-06,2.33333e-06",
    ]


def test_no_sources_give_an_empty_table_with_every_column() -> None:
    assert list(cost_table([]).columns) == COLUMNS


def test_repeated_benchmark_gives_the_median(tmp_path: Path) -> None:
    path = benchmark_file(tmp_path / "b.tsv", (3.0, 10.0, 1.0), (1.0, 30.0, 2.0), (2.0, 20.0, 9.0))
    assert read_benchmark(path) == {"seconds": 2.0, "cpu_seconds": 2.0, "max_rss_mb": 20.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("s\th:m:s\n1.0\t0:00:01\n", "missing columns cpu_time, max_rss"),
        ("s\tmax_rss\tcpu_time\n", r"not a Snakemake benchmark file \(no rows\)$"),
        ("", "not a readable Snakemake benchmark file"),
    ],
)
def test_bad_benchmark_file_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(content)
    with pytest.raises(TokstudyError, match=message) as error:
        read_benchmark(path)
    assert str(path) in str(error.value)


def test_write_cost_writes_csv_and_plots(
    tmp_path: Path, texts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = capture_figures(monkeypatch, plots)
    sources = [
        source(tmp_path, size, step, texts, (float(size) / 1000, 100.0, 1.0))
        for size in ("500", "4000")
        for step in ("train", "metrics")
    ]
    unsized = CostSource("en", "char", "full", None, "train", sources[0].figures, texts[:1])
    outputs = [tmp_path / "cost.png", tmp_path / "cost.pdf"]
    written = write_cost([*sources, unsized], tmp_path / "cost.csv", outputs)
    reread = pd.read_csv(tmp_path / "cost.csv", dtype={"size": str})
    assert list(reread.columns) == COLUMNS and len(reread) == len(written) == 5
    assert reread["size"].tolist() == ["full", "500", "500", "4000", "4000"]
    small = CostSource(
        "en",
        "sp_bpe",
        "60",
        60,
        "metrics",
        sources[1].figures,
        (text_file(tmp_path / "tiny.txt", 20),),
    )
    write_cost([small], tmp_path / "small.csv", outputs)
    assert pd.read_csv(tmp_path / "small.csv")["encode_mb_s"].iloc[0] == pytest.approx(4e-5)
    # the first plot: sp_bpe at 500 and 4000 (char's size "full" has no x position);
    # train 0.5 and 4 s at 100 MB, metrics over 3 + 1 MB of text in 0.5 and 4 s
    panels = visible_axes(figures[0])
    assert len(panels) == 3
    assert [lines_of(axis) for axis in panels] == [
        {"sp_bpe": ([500, 4000], [0.5, 4.0])},
        {"sp_bpe": ([500, 4000], [100.0, 100.0])},
        {"sp_bpe": ([500, 4000], [8.0, 1.0])},
    ]
    title = "Cost per tokenizer: median over 1 language(s), band min–max"
    assert figures[0].get_suptitle() == title
    assert texts_outside(figures[0]) == []  # no axis label cut off at the edge
    for axis in panels:  # every band lies beneath every line
        assert max(c.get_zorder() for c in axis.collections) < min(
            line.get_zorder() for line in axis.get_lines()
        )
    # 3 panels of 4.2 x 3.2 inches at 120 dpi
    assert imread(outputs[0]).shape[:2] == (round(3.2 * 120), round(3 * 4.2 * 120))
    assert outputs[1].read_bytes().startswith(b"%PDF")


# What a training or metric job imports is part of its cost: never torch or transformers,
# and numba only for the hft adapter, whose kernels need it. The jobs' script imports the
# dispatcher and the binder, and the library function of the job's rule
# (train_tokenizer, which also scores a trained cell; compute_metrics for pretrained cells
# and nmt_tokenizer_metrics: tokstudy.workflow.cell_job; the multilingual and NMT tokenizers:
# tokstudy.tokenizers.build).
JOB_MODULES = [
    "tokstudy.workflow.dispatch",
    "tokstudy.workflow.cell_job",
    "tokstudy.tokenizers.build",
]
HFT_MODULE = "tokstudy.tokenizers.adapters.hft"
ADAPTER_MODULES = sorted(
    {entry.location.split(":")[0] for entry in ADAPTERS.values()} - {HFT_MODULE}
)


JOB_HEAVY = ("torch", "transformers", "numba")


def heavy_modules_after_importing(
    modules: list[str], heavy: tuple[str, ...] = JOB_HEAVY
) -> list[str]:
    """Which of the ``heavy`` modules a fresh interpreter has after importing ``modules``."""
    code = (
        f"import importlib, sys\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
        f"print(' '.join(m for m in {heavy!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.split()


def test_training_and_metric_jobs_import_neither_torch_nor_transformers() -> None:
    assert heavy_modules_after_importing([*JOB_MODULES, *ADAPTER_MODULES]) == []
    assert heavy_modules_after_importing([*JOB_MODULES, HFT_MODULE]) == ["numba"]


def test_the_study_snakemake_parses_imports_no_heavy_library() -> None:
    # every snakemake call (dry runs and no-op reruns too) builds the study first
    heavy = (*JOB_HEAVY, "pandas", "scipy", "matplotlib", "sklearn")
    assert heavy_modules_after_importing(["tokstudy.workflow.study"], heavy) == []


def test_frequency_plots_tick_in_plain_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # frequencies 150…900 over ranks 101…400: less than a decade on the frequency axis,
    # where matplotlib's own labels read 2×10²
    figures = capture_figures(monkeypatch, plots)
    frequencies = {"sp_bpe 380": np.linspace(1000, 150, 400).round()}
    plots.plot_frequencies(frequencies, "en", "380", 100, [tmp_path / "f.png"])
    (axis,) = visible_axes(figures[0])
    labels = tick_labels(axis)
    assert labels and all(re.fullmatch(r"[\d,]+", label) for label in labels), labels
    assert "200" in labels and texts_outside(figures[0]) == []
