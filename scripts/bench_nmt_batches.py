"""Benchmark: peak memory of one NMT epoch's batch order, the whole corpus sorted at once
(:func:`~tokstudy.nmt.batching.token_batches` over every pair's length, the recipe before
windows) against a window at a time (:func:`~tokstudy.nmt.batching.window_batches`, what
training uses), side by side.

Writes the start files of a synthetic encoded corpus (``--pairs`` pairs of 1–60 tokens a
side; the id files are not read) into ``--scratch``, then, in a fresh process per way and
corpus size, draws one epoch's batches and prints the process's peak resident set against
its resident set after opening the pairs (``VmHWM`` and ``VmRSS``, in MB: the peak of this
process image, which ``ru_maxrss`` is not: it keeps the parent's across ``execve``).

    python scripts/bench_nmt_batches.py --scratch /tmp/nmt-batches --pairs 540000 2700000 13500000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from tokstudy.nmt.batching import (
    ID_FILES,
    INDEX_FILE,
    START_DTYPE,
    START_FILES,
    EncodedPairs,
    example_lengths,
    token_batches,
    window_batches,
)

WAYS = ("whole", "windows")
MAX_TOKENS = 4096


def make_pairs(folder: Path, pairs: int, seed: int = 0) -> None:
    """The start and index files of ``pairs`` pairs (once; kept for the next run)."""
    if (folder / INDEX_FILE).exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for side in ID_FILES:
        (folder / ID_FILES[side]).touch()
        lengths = rng.integers(1, 61, pairs)
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(START_DTYPE)
        starts.tofile(folder / START_FILES[side])
    np.arange(pairs, dtype=START_DTYPE).tofile(folder / INDEX_FILE)


def resident_mb(field: str = "VmRSS") -> int:
    """This process's resident set now (``VmRSS``) or at its peak (``VmHWM``), in MB."""
    status = Path("/proc/self/status").read_text().split("\n")
    return int(next(line for line in status if line.startswith(f"{field}:")).split()[1]) // 1024


def measure(folder: Path, way: str) -> None:
    """One epoch's batches drawn ``way``; one JSON line of MB and the batch count."""
    pairs = EncodedPairs(folder)
    opened = resident_mb()
    if way == "whole":
        batches = iter(token_batches(example_lengths(pairs, 0, len(pairs)), MAX_TOKENS, (0, 0)))
    else:
        batches = window_batches(pairs, MAX_TOKENS, (0, 0))
    count = sum(1 for _ in batches)
    peak = resident_mb("VmHWM")
    line = {"pairs": len(pairs), "way": way, "opened_mb": opened, "peak_mb": peak}
    print(json.dumps(line | {"batches": count}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path)
    parser.add_argument("--pairs", type=int, nargs="+", default=[540_000, 2_700_000])
    parser.add_argument("--measure", type=Path)
    parser.add_argument("--way", choices=WAYS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.way)
        return
    if args.scratch is None:
        parser.error("--scratch: a folder for the synthetic pairs")
    print("| pairs | way | after opening, MB | peak, MB | peak − opened, MB | batches |")
    print("|---:|---|---:|---:|---:|---:|")
    for pairs in args.pairs:
        folder = args.scratch / f"{pairs}"
        make_pairs(folder, pairs)
        for way in WAYS:
            command = [sys.executable, __file__, "--measure", str(folder), "--way", way]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            grown = row["peak_mb"] - row["opened_mb"]
            print(
                f"| {pairs:,} | {way} | {row['opened_mb']:,} | {row['peak_mb']:,} | "
                f"{grown:,} | {row['batches']:,} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
