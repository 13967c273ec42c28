"""Benchmark: HFT training against SentencePiece Unigram and BPE, and against the oracle.

All on the same lines (the corpus written to a temporary plain-text file, as the workflow's
prepared training split is), at each size, side by side in one run. Every training is
timed in CPU seconds of its process (all three train on one thread; a busy machine, where
the benchmark waits for a core, inflates wall time far more than CPU time) and in wall
seconds:

* **train, in process**: ``adapter_class(name).train(corpus, TrainSpec(size))`` of ``hft``,
  ``sp_unigram`` and ``sp_bpe`` with their default params (those of ``config/hft2022.yaml``),
  i.e. everything the adapter's ``train`` does: reading the file, pre-tokenizing and
  counting, learning, building the trained tokenizer (for ``hft`` also its encoder). The
  one-off per-process setup (imports, loading numba's compiled code from its disk cache,
  the encoder's character class table) is done by an untimed first training of ``hft`` and
  ``sp_bpe`` (the SentencePiece library). Repeated ``--repeats`` times, round robin over
  the tokenizers; the median is printed.
* **train, fresh process**: a new ``python`` process that imports the adapter and trains
  once (interpreter start, imports and one-off setup included: what a workflow job pays),
  median of ``--repeats``; in parentheses the part of its CPU time spent in ``train``.
* **oracle**: the simple implementation ``tests/hft_oracle.py`` learns the vocabulary once
  (its pre-token counting and learning); the script checks that it equals the ``hft``
  adapter's and prints the oracle's CPU time over the in-process ``hft`` median. Both then
  encode the corpus (whitespace-separated words per CPU second; the ids are checked equal).

Ratios are ``hft / sp_unigram`` and ``hft / sp_bpe`` (below 1: ``hft`` is faster), and
``oracle / hft`` (the speed-up over the oracle). Times vary with the machine and its load;
compare them within one run.

    python scripts/bench_hft.py [--corpus ../shared/corpora/hft2022/en.txt.gz]
        [--sizes 3000 8000] [--repeats 3] [--oracle-lines N] [--encode-lines N]
        [--skip-oracle] [--skip-fresh]

``--oracle-lines`` / ``--encode-lines`` restrict the oracle's training / both encoders to
the first N lines (default: the whole corpus) when the oracle is too slow.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import hft_oracle as oracle  # noqa: E402

from tokstudy.files.lines import read_text_lines, write_text_lines  # noqa: E402
from tokstudy.tokenizers.adapters.hft import HFT  # noqa: E402
from tokstudy.tokenizers.base import SPECIAL_TOKENS, TrainSpec  # noqa: E402
from tokstudy.tokenizers.hft.learn import step_size  # noqa: E402
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer  # noqa: E402
from tokstudy.tokenizers.registry import adapter_class  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "hft2022" / "en.txt.gz"
TOKENIZERS = ("hft", "sp_unigram", "sp_bpe")
BATCH_LINES = 2048
T = TypeVar("T")

#: what a fresh process runs: import the adapter, train once, report the CPU time of train
FRESH_TRAIN = """
import json, sys, time
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.registry import adapter_class
adapter = adapter_class(sys.argv[1])
cpu = time.process_time()
adapter.train(sys.argv[2], TrainSpec(int(sys.argv[3]), size_policy="adjust"))
print(json.dumps({"train_cpu": time.process_time() - cpu}))
"""


def timed(function: Callable[..., T], *args: Any) -> tuple[T, float, float]:
    """``function(*args)``, the CPU seconds (of this process) and wall seconds it took."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = function(*args)
    return result, time.process_time() - cpu, time.perf_counter() - wall


def children_cpu() -> float:
    """CPU seconds of the finished child processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def train(name: str, corpus: Path, size: int):
    """The adapter ``name`` trained on ``corpus`` at ``size`` with its default params (and
    ``size_policy: adjust``, as in ``config/hft2022.yaml``)."""
    return adapter_class(name).train(corpus, TrainSpec(size, size_policy="adjust"))


def fresh_train(name: str, corpus: Path, size: int) -> tuple[float, float, float]:
    """CPU seconds of a new process that imports ``name`` and trains once, the part of
    them spent in ``train``, and the process's wall seconds."""
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", FRESH_TRAIN, name, str(corpus), str(size)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - wall
    in_train = json.loads(done.stdout.splitlines()[-1])["train_cpu"]
    return children_cpu() - cpu, in_train, wall


def warm_train(name: str, corpus: Path, size: int) -> tuple[float, float]:
    """CPU and wall seconds of the adapter ``name``'s ``train`` in this process."""
    return timed(train, name, corpus, size)[1:]


def medians(
    run: Callable[[str, Path, int], tuple[float, ...]], corpus: Path, size: int, repeats: int
) -> list[dict[str, float]]:
    """Medians of ``repeats`` calls of ``run(name, corpus, size)`` per tokenizer (taken
    round robin), one dict per figure ``run`` returns."""
    results: dict[str, list[tuple[float, ...]]] = {name: [] for name in TOKENIZERS}
    for _ in range(repeats):
        for name in TOKENIZERS:
            results[name].append(run(name, corpus, size))
    figures = len(results[TOKENIZERS[0]][0])
    return [
        {name: statistics.median(r[k] for r in results[name]) for name in TOKENIZERS}
        for k in range(figures)
    ]


def ratios(seconds: dict[str, float], parts: dict[str, float] | None = None) -> str:
    """The tokenizers' seconds (and ``parts`` of them) and hft's ratios to the two
    SentencePiece trainers."""
    hft = seconds["hft"]
    times = ", ".join(
        f"{name} {seconds[name]:.2f} s" + (f" ({parts[name]:.2f} s)" if parts else "")
        for name in TOKENIZERS
    )
    return (
        f"{times}; hft/sp_unigram {hft / seconds['sp_unigram']:.2f}, "
        f"hft/sp_bpe {hft / seconds['sp_bpe']:.2f}"
    )


def oracle_train(lines: list[str], target: int, marks: Marks):
    counts = oracle.count_pretokens(lines, Pretokenizer(marks))
    tokens, freq, _ = oracle.learn(counts, target, marks, step_size(target))
    return tokens, freq


def fast_encode(tokenizer: HFT, lines: list[str]) -> list[list[int]]:
    return [
        ids
        for start in range(0, len(lines), BATCH_LINES)
        for ids in tokenizer.encode_batch(lines[start : start + BATCH_LINES])
    ]


def oracle_encode(tokens: list[str], freq: dict[str, int], marks: Marks, lines: list[str]):
    pretokenizer = Pretokenizer(marks)
    offset = len(SPECIAL_TOKENS)
    return [
        [0 if i < 0 else i + offset for i in oracle.encode(line, pretokenizer, tokens, freq)]
        for line in lines
    ]


def compare_with_oracle(
    corpus: Path, lines: list[str], size: int, hft_seconds: float, args: argparse.Namespace
) -> None:
    """Train the oracle once, check its vocabulary and encodings against ``hft``'s."""
    marks = Marks()
    target = size - len(SPECIAL_TOKENS)
    oracle_lines = lines[: args.oracle_lines]
    tokenizer = train("hft", corpus, size)
    if len(oracle_lines) < len(lines):
        print(f"  the oracle trains on the first {len(oracle_lines)} lines only")
        subset = corpus.with_name(f"first{len(oracle_lines)}.txt")
        write_text_lines(subset, oracle_lines)
        tokenizer, hft_seconds, _ = timed(train, "hft", subset, size)
    (tokens, freq), oracle_s, _ = timed(oracle_train, oracle_lines, target, marks)
    vocab = tokenizer.hft_vocab
    identical = list(vocab.tokens) == tokens and list(vocab.freqs) == [freq[t] for t in tokens]
    print(
        f"  oracle train: {oracle_s:.2f} CPU s, oracle/hft {oracle_s / hft_seconds:.1f}x, "
        f"identical vocabulary: {identical}"
    )
    encode_lines = lines[: args.encode_lines]
    words = sum(len(line.split()) for line in encode_lines)
    fast_ids, fast_s, _ = timed(fast_encode, tokenizer, encode_lines)
    freqs = dict(zip(vocab.tokens, vocab.freqs, strict=True))
    oracle_ids, oracle_enc_s, _ = timed(
        oracle_encode, list(vocab.tokens), freqs, marks, encode_lines
    )
    print(
        f"  encode {len(encode_lines)} lines, {words} words: "
        f"hft {words / fast_s:,.0f} words/CPU-s, oracle {words / oracle_enc_s:,.0f} words/CPU-s, "
        f"oracle/hft {oracle_enc_s / fast_s:.1f}x, "
        f"identical ids: {fast_ids == oracle_ids}"
    )


def main() -> None:
    """Time the trainers at each size and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 8000])
    parser.add_argument("--repeats", type=int, default=3, help="timings per median")
    parser.add_argument("--oracle-lines", type=int, default=None)
    parser.add_argument("--encode-lines", type=int, default=None)
    parser.add_argument("--skip-oracle", action="store_true", help="leave out the oracle")
    parser.add_argument("--skip-fresh", action="store_true", help="leave out fresh processes")
    args = parser.parse_args()
    lines = read_text_lines(args.corpus)
    print(
        f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}"
    )
    print(f"corpus: {args.corpus} ({len(lines)} lines); medians of {args.repeats} timings")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "train.txt"
        write_text_lines(corpus, lines)
        train("sp_bpe", corpus, 300)  # one-off setup, not timed
        fast_encode(train("hft", corpus, 300), lines[:200])
        for size in args.sizes:
            print(f"size {size}:")
            warm_cpu, warm_wall = medians(warm_train, corpus, size, args.repeats)
            print(f"  train, in process, CPU: {ratios(warm_cpu)}")
            print(f"  train, in process, wall: {ratios(warm_wall)}")
            if not args.skip_fresh:
                cpu, in_train, wall = medians(fresh_train, corpus, size, args.repeats)
                print(f"  train, fresh process, CPU (in train): {ratios(cpu, in_train)}")
                print(f"  train, fresh process, wall: {ratios(wall)}")
            if not args.skip_oracle:
                compare_with_oracle(corpus, lines, size, warm_cpu["hft"], args)


if __name__ == "__main__":
    main()
