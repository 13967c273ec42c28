"""Benchmark: the fast HFT implementation against the simple oracle (tests/hft_oracle.py).

Both learn a vocabulary from the same corpus at each size, side by side in one run (the
script checks the vocabularies and the encodings are identical), then encode the corpus.
Prints training seconds, encoding throughput (whitespace-separated words per second) and
the ratios. One-off setup is done before timing: numba's JIT compilation (cached on disk)
and the fast encoder's per-process table of character classes (about 0.2 s).

    python scripts/bench_hft.py [--corpus ../shared/corpora/hft2022/en.txt.gz]
                                [--sizes 3000 8000] [--oracle-lines N] [--encode-lines N]

``--oracle-lines`` / ``--encode-lines`` restrict the oracle's training / both encoders to
the first N lines (default: the whole corpus) when the oracle is too slow.
"""

from __future__ import annotations

import argparse
import gzip
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import hft_oracle as oracle  # noqa: E402

from tokstudy.tokenizers.base import SPECIAL_TOKENS  # noqa: E402
from tokstudy.tokenizers.hft.encoder import HFTEncoder  # noqa: E402
from tokstudy.tokenizers.hft.learn import count_pretokens, learn_vocabulary, step_size  # noqa: E402
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "hft2022" / "en.txt.gz"
BATCH_LINES = 2048


def read_corpus(path: Path) -> list[str]:
    """Lines of a plain or gzip-compressed UTF-8 corpus."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def timed(function, *args):
    """``function(*args)`` and the seconds it took."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def fast_train(lines: list[str], target: int, marks: Marks):
    counts = count_pretokens(lines, Pretokenizer(marks), "corpus")
    return learn_vocabulary(counts, target, marks, step_size(target)).vocab


def oracle_train(lines: list[str], target: int, marks: Marks):
    counts = oracle.count_pretokens(lines, Pretokenizer(marks))
    tokens, freq, _ = oracle.learn(counts, target, marks, step_size(target))
    return tokens, freq


def fast_encode(vocab, marks: Marks, lines: list[str]) -> list[list[int]]:
    encoder = HFTEncoder(vocab, marks, SPECIAL_TOKENS)
    return [
        ids
        for start in range(0, len(lines), BATCH_LINES)
        for ids in encoder.encode_lines(lines[start : start + BATCH_LINES])
    ]


def oracle_encode(tokens: list[str], freq: dict[str, int], marks: Marks, lines: list[str]):
    pretokenizer = Pretokenizer(marks)
    offset = len(SPECIAL_TOKENS)
    return [
        [0 if i < 0 else i + offset for i in oracle.encode(line, pretokenizer, tokens, freq)]
        for line in lines
    ]


def main() -> None:
    """Time both implementations at each size and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 8000])
    parser.add_argument("--oracle-lines", type=int, default=None)
    parser.add_argument("--encode-lines", type=int, default=None)
    args = parser.parse_args()
    marks = Marks()
    lines = read_corpus(args.corpus)
    encode_lines = lines[: args.encode_lines]
    words = sum(len(line.split()) for line in encode_lines)
    print(f"machine: {platform.machine()}, python {platform.python_version()}")
    print(f"corpus: {args.corpus} ({len(lines)} lines)")
    # one-off setup, not timed: JIT compilation and the character class table
    fast_encode(fast_train(lines[:200], 300, marks), marks, lines[:200])
    for size in args.sizes:
        target = size - len(SPECIAL_TOKENS)
        oracle_lines = lines[: args.oracle_lines]
        subset = args.oracle_lines is not None and args.oracle_lines < len(lines)
        vocab, fast_s = timed(fast_train, lines, target, marks)
        if subset:
            print(f"size {size}: the oracle trains on the first {len(oracle_lines)} lines only")
            sub_vocab, fast_sub_s = timed(fast_train, oracle_lines, target, marks)
        else:
            sub_vocab, fast_sub_s = vocab, fast_s
        (tokens, freq), oracle_s = timed(oracle_train, oracle_lines, target, marks)
        identical = list(sub_vocab.tokens) == tokens and list(sub_vocab.freqs) == [
            freq[t] for t in tokens
        ]
        print(
            f"size {size} train: fast {fast_sub_s:.2f} s, oracle {oracle_s:.2f} s, "
            f"ratio {oracle_s / fast_sub_s:.1f}x, identical vocabulary: {identical}"
            + (f" (fast on the whole corpus: {fast_s:.2f} s)" if subset else "")
        )
        ref_freq = dict(zip(sub_vocab.tokens, sub_vocab.freqs, strict=True))
        fast_ids, fast_enc_s = timed(fast_encode, sub_vocab, marks, encode_lines)
        oracle_ids, oracle_enc_s = timed(
            oracle_encode, list(sub_vocab.tokens), ref_freq, marks, encode_lines
        )
        print(
            f"size {size} encode {len(encode_lines)} lines, {words} words: "
            f"fast {words / fast_enc_s:,.0f} words/s, oracle {words / oracle_enc_s:,.0f} "
            f"words/s, ratio {oracle_enc_s / fast_enc_s:.1f}x, "
            f"identical ids: {fast_ids == oracle_ids}"
        )


if __name__ == "__main__":
    main()
