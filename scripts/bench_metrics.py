"""Benchmark: streaming batched metrics against a naive per-line ``encode`` loop.

Both compute the same token statistics on the same corpus with the same tokenizer, side by
side in one run; the script checks they agree and prints MB of text per second and the ratio.

    python scripts/bench_metrics.py [--corpus ../shared/corpora/hft2022/en.txt.gz] [--lines N]
        [--tokenizers sp_bpe hf_bpe …] [--pretrained ../shared/pretrained/gpt-4o …]

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

from tokstudy.corpora import prepare_corpus
from tokstudy.corpus_io import iter_lines
from tokstudy.metrics import compute_metrics
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.external import load_any
from tokstudy.tokenizers.registry import adapter_class

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "hft2022" / "en.txt.gz"
T = TypeVar("T")


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
    parser.add_argument(
        "--tokenizers", nargs="*", default=["sp_bpe", "sp_unigram", "hf_bpe", "hf_unigram"]
    )
    parser.add_argument("--pretrained", nargs="*", type=Path, default=[])
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
            f"{'tokenizer':<12} {'streaming MB/s':>15} {'naive MB/s':>11} {'speed-up':>9}"
            f" {'streaming MB/CPU-s':>19} {'naive MB/CPU-s':>15}"
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
            (metrics, counts), streaming, streaming_cpu = _timed(compute_metrics, tokenizer, train)
            (tokens, naive), baseline, baseline_cpu = _timed(naive_counts, tokenizer, train)
            assert tokens == metrics["tokens"] and np.array_equal(naive, counts), name
            print(
                f"{name:<12} {megabytes / streaming:>15.2f} {megabytes / baseline:>11.2f} "
                f"{baseline / streaming:>8.1f}x {megabytes / streaming_cpu:>19.2f} "
                f"{megabytes / baseline_cpu:>15.2f}"
            )


def _timed(function: Callable[..., T], *args: Any) -> tuple[T, float, float]:
    """``function(*args)``, its wall time and the process's CPU time (all threads), which a
    machine shared with other work does not inflate."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


if __name__ == "__main__":
    main()
