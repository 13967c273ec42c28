"""Benchmark: pre-tokenization against the tokenizer library's own batch encode, per core,
in one job and in shards.

On a text of ``--size`` GB (the shipped English lines shuffled and repeated, as
``bench_scale.py`` makes it) and a tokenizer trained on its first 20 MB, measures in fresh
processes, each on one core (``RAYON_NUM_THREADS=1``, one torch thread):

* ``library``: the library's batch encode of the same lines, ids out (HF ``tokenizers``'
  ``encode_batch_fast`` over the text read in batches of 2000 lines): the most
  pre-tokenization can reach;
* ``1 shard``: :func:`tokstudy.models.data.pretokenize` of the whole text (the
  ``pretokenize_mlm`` job);
* ``N shards``: ``N`` :func:`pretokenize` jobs of ``shard=(k, N)`` run side by side, then
  :func:`merge_corpora` (rules ``pretokenize_shard`` and ``merge_pretokenized``).

Per core = MB of text per CPU second (user + system, summed over the processes: the
machine's other load changes wall time more than CPU time). Prints each pass's MB per CPU
second and wall seconds, and each pre-tokenization's share of the library's (the median of
``--repeats`` interleaved repeats).

    python scripts/bench_pretokenize.py --scratch /work/runs/issue57 [--size 1] [--shards 2]
        [--tokenizer hf_bpe] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_scale import REPO, make_corpus

SAMPLE_BYTES = 20_000_000
VOCAB = 8000


def run_pass(kind: str, work: Path, shard: int, shards: int) -> None:
    """One pass in this process; prints CPU and wall seconds as JSON."""
    import torch

    from tokstudy.files.lines import batched, iter_nonblank_lines
    from tokstudy.models.data import merge_corpora, pretokenize
    from tokstudy.models.family import load_transformers_tokenizer

    torch.set_num_threads(1)
    tokenizer = load_transformers_tokenizer(work / "tokenizer")
    start = time.perf_counter()
    if kind == "library":
        backend = tokenizer.backend_tokenizer
        tokens = 0
        for lines in batched(iter_nonblank_lines(work / "text.txt"), 2000):
            tokens += sum(len(e.ids) for e in backend.encode_batch_fast(lines, False))
    elif kind == "shard":
        out = work / f"part{shard}"
        tokens = pretokenize(tokenizer, work / "text.txt", out, shard=(shard, shards)).n_tokens
    else:  # merge
        parts = [work / f"part{k}" for k in range(shards)]
        tokens = merge_corpora(parts, work / "merged").n_tokens
    usage = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter() - start
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "tokens": tokens}))


def launch(kind: str, work: Path, shard: int = 0, shards: int = 1) -> subprocess.Popen:
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--run", kind, "--work", str(work)]
    command += ["--shard", str(shard), "--of", str(shards)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)


def finished(process: subprocess.Popen) -> dict[str, float]:
    out, _ = process.communicate()
    if process.returncode:
        raise SystemExit(f"{process.args}: failed")
    return json.loads(out.strip().splitlines()[-1])


def measure(work: Path, shards: int) -> dict[str, dict[str, float]]:
    """The CPU seconds (summed) and wall seconds of the library pass, one job, N shards."""
    for folder in [work / "merged", *(work / f"part{k}" for k in range(shards))]:
        shutil.rmtree(folder, ignore_errors=True)
    library = finished(launch("library", work))
    one = finished(launch("shard", work))
    shutil.rmtree(work / "part0")
    start = time.perf_counter()
    parts = [finished(p) for p in [launch("shard", work, k, shards) for k in range(shards)]]
    merge = finished(launch("merge", work, 0, shards))
    sharded = {
        "cpu": sum(p["cpu"] for p in parts) + merge["cpu"],
        "wall": time.perf_counter() - start,
        "tokens": merge["tokens"],
    }
    assert one["tokens"] == sharded["tokens"], (one, sharded)
    return {"library": library, "1 shard": one, f"{shards} shards": sharded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path)
    parser.add_argument("--size", type=float, default=1.0)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--tokenizer", default="hf_bpe")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--run", choices=["library", "shard", "merge"])
    parser.add_argument("--work", type=Path)
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--of", type=int, default=1)
    args = parser.parse_args()
    if args.run:
        run_pass(args.run, args.work, args.shard, args.of)
        return
    if args.scratch is None or args.scratch.resolve().is_relative_to(REPO):
        parser.error("--scratch: a folder outside the repository")
    from tokstudy.tokenizers.base import TrainSpec
    from tokstudy.tokenizers.build import train_to_directory

    work = args.scratch / f"pretokenize_{args.size:g}GB"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    size = make_corpus(work / "text.txt", int(args.size * 1e9))
    make_corpus(work / "sample.txt", SAMPLE_BYTES)
    spec = TrainSpec(VOCAB, seed=42)
    train_to_directory(args.tokenizer, work / "sample.txt", spec, work / "tokenizer")
    runs = [measure(work, args.shards) for _ in range(args.repeats)]
    print(f"{size:,} bytes of text, {args.tokenizer} {VOCAB}, {args.repeats} repeats")
    print("| pass | MB per CPU second | wall s | share of the library |")
    print("|---|---|---|---|")
    for name in runs[0]:
        rates = [size / 1e6 / run[name]["cpu"] for run in runs]
        shares = [run[name]["cpu"] and run["library"]["cpu"] / run[name]["cpu"] for run in runs]
        wall = statistics.median(run[name]["wall"] for run in runs)
        print(
            f"| {name} | {statistics.median(rates):.2f} | {wall:.0f} | "
            f"{statistics.median(shares):.2f} |"
        )
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
