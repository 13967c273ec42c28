"""Benchmark: resident memory of the causal LM's training stream as a run draws blocks,
read with positional reads (``DiskArray``, what training uses) against memory maps of the
same files, side by side.

Writes a synthetic pre-tokenized corpus (``--lines`` lines of 1–39 random ids, uint16) into
``--scratch``, then, in a fresh process per reader, opens the stream over it and prints the
resident set (``VmRSS``: anonymous and file pages) after opening and after each number of
steps of ``--batch`` blocks of ``--context`` + 1 tokens.

    python scripts/bench_stream_memory.py --scratch /tmp/stream --lines 48000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from tokstudy.models.clm.stream import LineStream
from tokstudy.models.data import BlockSampler, Chunk, TokenCorpus, write_corpus

STEPS = (0, 13, 100, 500)
READERS = ("positional", "memmap")


def resident_mb() -> dict[str, int]:
    """This process's resident set and its file-backed part, in MB."""
    fields = dict(
        line.split(":", 1)
        for line in Path("/proc/self/status").read_text().split("\n")
        if ":" in line
    )
    return {key: int(fields[key].split()[0]) // 1024 for key in ("VmRSS", "RssFile")}


def make_corpus(folder: Path, lines: int, seed: int = 0) -> None:
    """A corpus of ``lines`` lines of 1–39 random ids (once; kept for the next run)."""
    if (folder / "corpus.json").exists():
        return
    rng = np.random.default_rng(seed)

    def chunks():
        for first in range(0, lines, 1_000_000):
            lengths = rng.integers(1, 40, min(1_000_000, lines - first))
            yield Chunk(lengths, {"ids": rng.integers(5, 8000, lengths.sum()).astype(np.uint16)})

    write_corpus(folder, chunks(), {"ids": np.dtype(np.uint16)}, {"fingerprint": "synthetic"})


def measure(folder: Path, reader: str, context: int, batch: int) -> None:
    """Draw blocks through ``reader`` and print one JSON line of resident MB per step count."""
    corpus = TokenCorpus.open(folder)
    ids, offsets = corpus.ids, corpus.line_offsets
    if reader == "memmap":
        ids = np.memmap(folder / "ids.bin", dtype=np.uint16, mode="r")
        offsets = np.load(folder / "line_offsets.npy", mmap_mode="r")
    stream = LineStream(ids, offsets, 2, 0, corpus.n_lines)
    sampler = BlockSampler(len(stream), context + 1, batch, seed=0)
    done, rows = 0, {}
    for steps in STEPS:
        for step in range(done, steps):
            stream.blocks(sampler.starts(step), context + 1)
        done = steps
        rows[steps] = resident_mb()
    print(json.dumps({"reader": reader, "rows": rows}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path, required=True)
    parser.add_argument("--lines", type=int, default=48_000_000)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--reader", choices=READERS)
    args = parser.parse_args()
    folder = args.scratch / f"corpus_{args.lines}"
    if args.reader:
        measure(folder, args.reader, args.context, args.batch)
        return
    make_corpus(folder, args.lines)
    size = sum(path.stat().st_size for path in folder.iterdir()) / 1e6
    print(
        f"{args.lines:,} lines, {size:,.0f} MB on disk; "
        f"blocks of {args.context + 1}, batch {args.batch}"
    )
    print("| reader | " + " | ".join(f"{steps} steps: MB (file)" for steps in STEPS) + " |")
    print("|---|" + "---:|" * len(STEPS))
    for reader in READERS:
        command = [
            sys.executable,
            __file__,
            "--scratch",
            str(args.scratch),
            "--lines",
            str(args.lines),
            "--context",
            str(args.context),
            "--batch",
            str(args.batch),
            "--reader",
            reader,
        ]
        result = json.loads(
            subprocess.run(command, capture_output=True, text=True, check=True).stdout
        )
        cells = [f"{row['VmRSS']:,} ({row['RssFile']:,})" for row in result["rows"].values()]
        print(f"| {reader} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
