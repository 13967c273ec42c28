"""Benchmark: the metric pass against raw batch encoding and a naive per-line loop.

Per tokenizer, side by side in one run on the same text: the streaming batched metric pass
(:func:`tokstudy.metrics.compute.compute_metrics`), the raw batch encoding of the same lines (the
most the metric pass can reach) and a naive ``encode`` loop per line and word (checked to
give the same counts). Prints MB of text per second of each, the metric pass as a share of
raw batch encoding and its speed-up over the naive loop. The raw and metric passes run
``--repeats`` times, one after the other (default 3); the figures are medians, the share
the median of each repeat's share (adjacent runs see the same load).

    python scripts/bench_metrics.py [--corpus ../shared/corpora/hft2022/en.txt.gz] [--lines N]
        [--tokenizers sp_bpe hft …] [--pretrained ../shared/pretrained/gpt-4o …] [--skip-naive]
        [--repeats N]

``--pretrained`` adds pretrained tokenizers (any path ``tokstudy.tokenizers.external.load_any``
reads, e.g. GPT-4o's 200k-vocabulary ``tokenizer.json``) to the trained ones.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tokstudy.corpora.prepare import prepare_corpus
from tokstudy.files.lines import batched, iter_lines
from tokstudy.metrics.compute import compute_metrics
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.build import BATCH_LINES
from tokstudy.tokenizers.external import load_any
from tokstudy.tokenizers.registry import adapter_class

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "hft2022" / "en.txt.gz"
T = TypeVar("T")
DEFAULT_TOKENIZERS = ["sp_bpe", "sp_unigram", "hf_bpe", "hf_unigram"]


def raw_batch_encode(tokenizer: Tokenizer, corpus: Path) -> int:
    """Token count of the corpus encoded in batches, as the metric pass reads it."""
    return sum(
        len(ids)
        for batch in batched(iter_lines(corpus), BATCH_LINES)
        for ids in tokenizer.encode_batch(batch)
    )


def naive_counts(tokenizer: Tokenizer, corpus: Path) -> tuple[int, np.ndarray]:
    """Token count and id frequencies, one ``encode`` call per line and word."""
    counts = np.zeros(len(tokenizer.vocab), dtype=np.int64)
    words: Counter[str] = Counter()
    tokens = 0
    for line in iter_lines(corpus):
        ids = tokenizer.encode(line)
        tokens += len(ids)
        for i in ids:
            counts[i] += 1
        for word in line.split():
            words[word] += len(tokenizer.encode(word))
    return tokens, counts


def main() -> None:
    """Train the tokenizers, time both implementations and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--lines", type=int, default=None, help="use only the first N lines")
    parser.add_argument("--vocab-size", type=int, default=3000)
    parser.add_argument("--tokenizers", nargs="*", default=DEFAULT_TOKENIZERS)
    parser.add_argument("--pretrained", nargs="*", type=Path, default=[])
    parser.add_argument("--skip-naive", action="store_true", help="leave out the naive loop")
    parser.add_argument("--repeats", type=int, default=3, help="raw and metric passes, each")
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp) / "train.txt", Path(tmp) / "heldout.txt"
        prepare_corpus(
            [args.corpus],
            train,
            held,
            Path(tmp) / "stats.json",
            label="bench",
            heldout=10,
            seed=0,
            max_lines=args.lines,
        )
        megabytes = train.stat().st_size / 1e6
        print(f"corpus: {args.corpus} ({megabytes:.2f} MB of training text)")
        print(
            f"{'tokenizer':<12} {'raw MB/s':>9} {'metric MB/s':>12} {'metric/raw':>10} "
            f"{'metric MB/CPU-s':>15} {'naive MB/s':>10} {'metric/naive':>12}"
        )
        tokenizers = {
            name: lambda name=name: adapter_class(name).train(
                train, TrainSpec(args.vocab_size, threads=2)
            )
            for name in args.tokenizers
        }
        tokenizers.update({path.name: lambda path=path: load_any(path) for path in args.pretrained})
        for name, make in tokenizers.items():
            tokenizer = make()
            raws, passes, passes_cpu = [], [], []
            for _ in range(args.repeats):
                raws.append(_timed(raw_batch_encode, tokenizer, train)[1])
                (metrics, counts), wall, cpu = _timed(compute_metrics, tokenizer, train)
                passes.append(wall)
                passes_cpu.append(cpu)
            raw, streaming, streaming_cpu = map(np.median, (raws, passes, passes_cpu))
            share = np.median(np.array(raws) / np.array(passes))
            naive_columns = f"{'-':>10} {'-':>12}"
            if not args.skip_naive:
                (naive_tokens, naive), baseline, _ = _timed(naive_counts, tokenizer, train)
                assert naive_tokens == metrics["tokens"] and np.array_equal(naive, counts), name
                naive_columns = f"{megabytes / baseline:>10.2f} {baseline / streaming:>11.1f}x"
            print(
                f"{name:<12} {megabytes / raw:>9.2f} {megabytes / streaming:>12.2f} "
                f"{share:>10.2f} {megabytes / streaming_cpu:>15.2f} {naive_columns}"
            )


def _timed(function: Callable[..., T], *args: Any) -> tuple[T, float, float]:
    """``function(*args)``, its wall time and the process's CPU time (all threads), which a
    machine shared with other work does not inflate."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


if __name__ == "__main__":
    main()
