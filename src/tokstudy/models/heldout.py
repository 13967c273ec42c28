"""What a held-out score needs besides the model: per-line sums, a bootstrap interval over
lines and the share of lines a tokenizer gives back exactly.

A model is only compared fairly with another when both predict the same text: a tokenizer
that normalises (SentencePiece's ``nmt_nfkc``, NFKC in ``char``) is scored on a simpler
string than the held-out bytes its bits are divided by. :func:`roundtrip_share` measures
that per cell in lines (1.0: every line decodes back to itself) and :func:`lossy_bytes` in
bytes (the share of the bytes bits per byte are divided by that the decoded text does not
give back); the tables mark a cell above
:data:`tokstudy.models.run_flags.LOSSY_TOLERANCE` ``lossy``.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from tokstudy.tokenizers.directory import META_FILE
from tokstudy.tokenizers.registry import load_tokenizer

#: confidence of the bits-per-byte interval
CONFIDENCE = 0.95

Decode = Callable[[list[int]], str]


def per_line_sums(values: np.ndarray, counts: Sequence[int]) -> np.ndarray:
    """Sums of consecutive runs of ``values``, ``counts[i]`` values in run ``i`` (each ≥ 1)."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(values) != counts.sum() or (counts < 1).any():
        raise ValueError(f"{len(values)} values do not split into runs of {counts.tolist()}")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.add.reduceat(np.asarray(values, dtype=np.float64), starts)


def bits_per_byte_interval(
    line_nats: np.ndarray, line_bytes: np.ndarray, *, resamples: int, seed: int
) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of Σ nats / ln 2 / Σ bytes, resampling lines
    (:func:`scipy.stats.bootstrap`, paired); NaN with fewer than two lines."""
    if len(line_nats) < 2:
        return math.nan, math.nan

    def ratio(nats: np.ndarray, n_bytes: np.ndarray, axis: int = -1) -> np.ndarray:
        return nats.sum(axis=axis) / math.log(2) / n_bytes.sum(axis=axis)

    result = stats.bootstrap(
        (np.asarray(line_nats, dtype=np.float64), np.asarray(line_bytes, dtype=np.float64)),
        ratio,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def decoder_for(tokenizer_dir: Path, tokenizer: Any) -> Decode:
    """How a cell's token ids are turned back into text: the tokstudy adapter's ``decode``
    for a tokstudy tokenizer folder, the ``transformers`` tokenizer's otherwise."""
    if (Path(tokenizer_dir) / META_FILE).is_file():
        return load_tokenizer(tokenizer_dir).decode
    return lambda ids: tokenizer.decode(ids, clean_up_tokenization_spaces=False)


def roundtrip_share(
    encoded: Sequence[Sequence[int]], lines: Sequence[str], decode: Decode
) -> float:
    """Share of ``lines`` whose token ids (``encoded``, one list per line) decode back to
    exactly the line."""
    exact = sum(decode(list(ids)) == line for ids, line in zip(encoded, lines, strict=True))
    return exact / len(lines)


def lossy_bytes(encoded: Sequence[Sequence[int]], lines: Sequence[str], decode: Decode) -> float:
    """Share of the held-out bytes (each line's UTF-8 bytes and its newline, what bits per
    byte divide by) that decoding ``encoded`` does not give back: for a line that does not
    decode to itself, its bytes outside the longest matching blocks of line and decoded
    text (:class:`difflib.SequenceMatcher`, no junk heuristic)."""
    lost = total = 0
    for ids, line in zip(encoded, lines, strict=True):
        original = line.encode("utf-8")
        total += len(original) + 1
        decoded = decode(list(ids)).encode("utf-8")
        if decoded != original:
            blocks = difflib.SequenceMatcher(None, original, decoded, autojunk=False)
            lost += len(original) - sum(block.size for block in blocks.get_matching_blocks())
    return lost / total
