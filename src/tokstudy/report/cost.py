"""Cost of a study: time and peak memory of every tokenizer training and metric pass.

A trained cell is one job (rule ``train_tokenizer``) with three rows: ``train`` (training
and saving) and ``metrics`` (the train and held-out passes), measured by the job itself
(:mod:`tokstudy.runtime.job_cost`: its phase file), and ``job``, the whole process (interpreter
start, imports, both phases) from its Snakemake ``benchmark:`` file (one TSV: ``s``,
``cpu_time`` and ``max_rss`` in MB among Snakemake's columns). A pretrained cell's
``metrics`` row and a multilingual tokenizer's ``train_multilingual`` row are their jobs'
benchmark files. Peak memory is the process's peak so far: a ``metrics`` row's includes
the training's. ``compile_seconds`` is the part of a phase row's ``seconds`` that numba spent
compiling kernels not yet in its disk cache (:mod:`tokstudy.runtime.jit`; ``hft`` after a fresh
checkout), a one-off that is not the tokenizer's cost; empty for rows from benchmark files
(the ``job`` row includes its phases'). The figures depend on the machine that ran the jobs
and its load: compare them within one run, not across machines.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.files.write_errors import naming_write_failures
from tokstudy.report.plots import plot_cost
from tokstudy.runtime.job_cost import read_phase_costs

log = logging.getLogger(__name__)

COLUMNS = [
    "language",
    "tokenizer",
    "size",
    "vocab_size",
    "step",
    "seconds",
    "cpu_seconds",
    "max_rss_mb",
    "compile_seconds",
    "text_mb",
    "encode_mb_s",
]
#: Snakemake benchmark column → cost column
BENCHMARK_COLUMNS = {"s": "seconds", "cpu_time": "cpu_seconds", "max_rss": "max_rss_mb"}
#: the step whose text MB per second is an encoding throughput
METRICS_STEP = "metrics"
BYTES_PER_MB = 1_000_000


@dataclass(frozen=True)
class CostSource:
    """One row of the table: its cell, its step, the file that measured it and the text the
    step read. ``figures`` is a Snakemake benchmark file (``.tsv``), or a job's phase file
    (``.json``), whose phase ``step`` the row is."""

    language: str
    tokenizer: str
    size: str
    vocab_size: int | None
    step: str
    figures: Path
    texts: tuple[Path, ...]

    def read(self) -> dict[str, float]:
        """Seconds, CPU seconds and peak RSS (MB) of the row."""
        if self.figures.suffix != ".json":
            return {**read_benchmark(self.figures), "compile_seconds": np.nan}
        phases = read_phase_costs(self.figures)
        if self.step not in phases:
            raise TokstudyError(f"{self.figures}: no phase {self.step!r} (has {sorted(phases)})")
        return phases[self.step]


def read_benchmark(path: Path) -> dict[str, float]:
    """Seconds, CPU seconds and peak RSS (MB) of one benchmark file (median of repeats).

    Snakemake writes ``NA`` for CPU and memory of a job that ended before its first
    sample (0.5 s); those stay NaN.
    """
    try:
        frame = pd.read_csv(path, sep="\t", na_values=["NA", "-"])
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise TokstudyError(f"{path}: not a readable Snakemake benchmark file ({exc})") from None
    missing = sorted(set(BENCHMARK_COLUMNS) - set(frame.columns))
    if missing or frame.empty:
        problem = f"missing columns {', '.join(missing)}" if missing else "no rows"
        raise TokstudyError(f"{path}: not a Snakemake benchmark file ({problem})")
    return {
        cost: float(pd.to_numeric(frame[column], errors="raise").median())
        for column, cost in BENCHMARK_COLUMNS.items()
    }


def text_megabytes(paths: Sequence[Path]) -> float:
    """Size of the text files a job read, in MB (10⁶ bytes)."""
    return sum(Path(path).stat().st_size for path in paths) / BYTES_PER_MB


def _size_key(vocab_size: int | None) -> tuple[int, int]:
    """Requested sizes in order, then the rows without one (``full``, ``pretrained``,
    ``all``)."""
    return (0, vocab_size) if vocab_size is not None else (1, 0)


def cost_table(sources: Sequence[CostSource]) -> pd.DataFrame:
    """One row per source, sorted by language, tokenizer, size and step (columns
    :data:`COLUMNS`).

    ``encode_mb_s`` is text MB over wall seconds, those of ``compile_seconds`` left out, for
    ``metrics`` rows (which encode the train and held-out text), empty for the others.
    """
    rows = []
    for source in sorted(
        sources, key=lambda s: (s.language, s.tokenizer, _size_key(s.vocab_size), s.step)
    ):
        figures = source.read()
        text_mb = text_megabytes(source.texts)
        working = figures["seconds"] - np.nan_to_num(figures["compile_seconds"])
        encode = text_mb / working if source.step == METRICS_STEP else np.nan
        rows.append(
            {
                "language": source.language,
                "tokenizer": source.tokenizer,
                "size": source.size,
                "vocab_size": source.vocab_size,
                "step": source.step,
                **figures,
                "text_mb": text_mb,
                "encode_mb_s": encode,
            }
        )
    table = pd.DataFrame(rows, columns=COLUMNS)
    compiling = table["compile_seconds"] > 0
    if compiling.any():
        log.info(
            "%d step(s) include %.1f s of numba compiling kernels not yet in its disk cache "
            "(a one-off of a fresh checkout): column compile_seconds, left out of the plot",
            compiling.sum(),
            table["compile_seconds"].sum(),
        )
    unsampled = table["max_rss_mb"].isna().sum()
    if unsampled:
        log.info(
            "%d of %d jobs ended before Snakemake's first memory sample: "
            "cpu_seconds and max_rss_mb left empty for them",
            unsampled,
            len(table),
        )
    return table


def write_cost(sources: Sequence[CostSource], csv: Path, plots: Sequence[Path]) -> pd.DataFrame:
    """Write the cost table to ``csv`` and its plot (:func:`plot_cost`) to ``plots``."""
    table = cost_table(sources)
    with naming_write_failures(csv, "the table"):
        table.to_csv(csv, index=False, float_format="%.6g")
    log.info("cost rows (%d) written to %s", len(table), csv)
    plot_cost(table, plots)
    return table
