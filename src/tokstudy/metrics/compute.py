"""Intrinsic tokenizer metrics, computed by streaming a corpus through a tokenizer.

Definitions (``f`` are the frequencies of the vocabulary items that occur in the tokenized
text, sorted in descending order; ``i`` is the 1-based rank):

- ``f95``: the frequency at index ⌊0.95·n⌋ (0-based) of that list, n = its length
  (Signoroni & Rychlý, 2022).
- ``mu``: mean number of tokens per line.
- ``nu``: Σᵢ i·fᵢ / Σᵢ i, the rank-weighted average frequency over the occurring items.
- ``fertility``: mean number of tokens per whitespace-separated word of the running text.
  Each line is encoded once, in context; a token belongs to the word in which it starts,
  a token that starts in whitespace (GPT-style ``Ġsaid``, SentencePiece ``▁``) to the next
  word, one after the last word to the last word (see :func:`tokens_per_word`). So
  fertility is the line's tokens over its words whatever the adapter; lines without a word
  add neither.
- ``continued_words``: share of running words that get ≥ 2 tokens by the same counting.
- ``unk_rate``: share of tokens that are the unknown token.
- ``chars_per_token`` / ``bytes_per_token``: characters / UTF-8 bytes of the text per token.
- ``vocab_used``: share of the non-control vocabulary that occurs at least once.
- ``renyi_efficiency``: H_α(p) / log|V| with α = 2.5 (Zouhar et al., 2023), p the unigram
  token distribution, |V| the full vocabulary size.
- counts: ``lines``, ``words``, ``tokens``, ``vocab_size``.

:data:`METRICS` is the one list of metrics: name → :class:`Metric`, a function of the
counts it names. The counts come from one streaming pass: :data:`BATCH_COUNTS` are summed
over the encoded batches, :data:`PASS_COUNTS` are taken once from the tokenizer and the id
frequencies. Adding a metric is one function and one line in :data:`METRICS` (and one in
:data:`BATCH_COUNTS` or :data:`PASS_COUNTS` if it needs a new count); the config schema's
``metrics`` enum is checked against :data:`METRICS` by ``tests/test_study.py``.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched, count_lines, iter_lines
from tokstudy.runtime.progress import progress
from tokstudy.tokenizers.base import Tokenizer, TokenStarts
from tokstudy.tokenizers.words import batch_words

log = logging.getLogger(__name__)

RENYI_ALPHA = 2.5
BATCH_LINES = 2048


def check_metric_names(names: Iterable[str]) -> None:
    """Raise a one-line error for any name that is not a metric."""
    unknown = sorted(set(names) - set(METRICS))
    if unknown:
        raise TokstudyError(f"unknown metric(s) {', '.join(unknown)}; valid: {', '.join(METRICS)}")


def _ranked(frequencies: np.ndarray) -> np.ndarray:
    occurring = np.asarray(frequencies, dtype=np.float64)
    return np.sort(occurring[occurring > 0])[::-1]


def f95(frequencies: np.ndarray) -> float:
    """Frequency at index ⌊0.95·n⌋ of the occurring items sorted by descending frequency."""
    ranked = _ranked(frequencies)
    return float(ranked[math.floor(0.95 * len(ranked))]) if len(ranked) else math.nan


def nu(frequencies: np.ndarray) -> float:
    """Rank-weighted average frequency Σ i·f(xᵢ) / Σ i over the occurring items."""
    ranked = _ranked(frequencies)
    ranks = np.arange(1, len(ranked) + 1, dtype=np.float64)
    return float((ranks * ranked).sum() / ranks.sum()) if len(ranked) else math.nan


def renyi_efficiency(
    frequencies: np.ndarray, vocabulary_items: int, alpha: float = RENYI_ALPHA
) -> float:
    """Rényi entropy of order ``alpha`` of the token distribution over log(vocabulary_items)."""
    ranked = _ranked(frequencies)
    if not len(ranked) or vocabulary_items < 2:
        return math.nan
    p = ranked / ranked.sum()
    entropy = math.log(float((p**alpha).sum())) / (1.0 - alpha)
    return entropy / math.log(vocabulary_items)


def tokens_per_word(lines: Sequence[str], batch: TokenStarts) -> np.ndarray:
    """Tokens of each whitespace-separated word of ``lines`` in their in-context encoding.

    A token counts for the first word of its line that ends after the token's start
    offset (the word it starts in, or the next one when it starts in whitespace); tokens
    after a line's last word count for that word; a line without words adds nothing. One
    entry per word of the batch, line after line.
    """
    words = batch.words if batch.words is not None else batch_words(lines)
    if batch.word is not None:
        return np.bincount(batch.word[batch.word >= 0], minlength=len(words.ends))
    line_of_token = np.repeat(np.arange(len(lines)), batch.lengths)
    positions = words.line_starts[line_of_token] + batch.starts
    word = np.searchsorted(words.ends, positions, side="right")
    last_word = (words.first + words.counts - 1)[line_of_token]
    in_a_word = words.counts[line_of_token] > 0
    return np.bincount(np.minimum(word, last_word)[in_a_word], minlength=len(words.ends))


@dataclass
class EncodedBatch:
    """One batch of lines and its encoding with token starts, as a batch count reads it."""

    lines: Sequence[str]
    encoded: TokenStarts

    @functools.cached_property
    def per_word(self) -> np.ndarray:
        """Tokens of each word of the batch (:func:`tokens_per_word`)."""
        return tokens_per_word(self.lines, self.encoded)

    @functools.cached_property
    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self.lines)


#: a count summed over the encoded batches of a corpus: name → its value on one batch
BATCH_COUNTS: dict[str, Callable[[EncodedBatch], int]] = {
    "lines": lambda batch: len(batch.lines),
    "tokens": lambda batch: len(batch.encoded.ids),
    "words": lambda batch: len(batch.per_word),
    "word_tokens": lambda batch: int(batch.per_word.sum()),
    "continued_words": lambda batch: int((batch.per_word >= 2).sum()),
    "chars": lambda batch: len(batch.text) - len(batch.lines) + 1,
    "utf8_bytes": lambda batch: len(batch.text.encode("utf-8")) - len(batch.lines) + 1,
}


def _text_frequencies(tokenizer: Tokenizer, id_counts: np.ndarray) -> np.ndarray:
    frequencies = id_counts.copy()
    frequencies[list(tokenizer.special_ids)] = 0
    return frequencies


#: a count of the whole pass: name → its value from the tokenizer and the frequency of
#: every id (``frequencies``: with the special ids' set to 0; ``unk_tokens``: ``None``
#: for a tokenizer without an unknown token)
PASS_COUNTS: dict[str, Callable[[Tokenizer, np.ndarray], Any]] = {
    "frequencies": _text_frequencies,
    "vocabulary_items": lambda tokenizer, id_counts: len(tokenizer.vocab),
    "text_vocabulary_items": lambda tokenizer, id_counts: (
        len(tokenizer.vocab) - len(tokenizer.special_ids)
    ),
    "unk_tokens": lambda tokenizer, id_counts: (
        None if tokenizer.unk_id is None else id_counts[tokenizer.unk_id]
    ),
}


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, NaN when the denominator is 0."""
    return numerator / denominator if denominator else math.nan


def unk_rate(unk_tokens: int | None, tokens: int) -> float:
    """Share of tokens that are the unknown token (0 for a tokenizer without one)."""
    return 0.0 if unk_tokens is None else ratio(unk_tokens, tokens)


def vocab_used(frequencies: np.ndarray, text_vocabulary_items: int) -> float:
    """Share of the non-control vocabulary that occurs at least once."""
    return int((frequencies > 0).sum()) / text_vocabulary_items


def total(count: float) -> float:
    """A count reported as it is."""
    return count


@dataclass(frozen=True)
class Metric:
    """A registered metric: ``function`` of the counts named in ``counts``, in that order
    (names of :data:`BATCH_COUNTS` or :data:`PASS_COUNTS`)."""

    function: Callable[..., float]
    counts: tuple[str, ...]


#: name → metric: the one list of metrics, in the order of the metric tables
METRICS: dict[str, Metric] = {
    "f95": Metric(f95, ("frequencies",)),
    "mu": Metric(ratio, ("tokens", "lines")),
    "nu": Metric(nu, ("frequencies",)),
    "fertility": Metric(ratio, ("word_tokens", "words")),
    "continued_words": Metric(ratio, ("continued_words", "words")),
    "unk_rate": Metric(unk_rate, ("unk_tokens", "tokens")),
    "chars_per_token": Metric(ratio, ("chars", "tokens")),
    "bytes_per_token": Metric(ratio, ("utf8_bytes", "tokens")),
    "vocab_used": Metric(vocab_used, ("frequencies", "text_vocabulary_items")),
    "renyi_efficiency": Metric(renyi_efficiency, ("frequencies", "vocabulary_items")),
    "lines": Metric(total, ("lines",)),
    "words": Metric(total, ("words",)),
    "tokens": Metric(total, ("tokens",)),
    "vocab_size": Metric(total, ("vocabulary_items",)),
}


#: the metrics that are a ratio of two counts summed over lines (``fertility``,
#: ``bytes_per_token``, …): name → (numerator, denominator). Their value over any set of
#: lines is the ratio of the lines' sums, so a bootstrap over lines resamples them
#: (:func:`line_counts`).
LINE_RATIOS: dict[str, tuple[str, str]] = {
    name: metric.counts
    for name, metric in METRICS.items()
    if metric.function is ratio and set(metric.counts) <= set(BATCH_COUNTS)
}


def line_counts(
    tokenizer: Tokenizer, lines: Sequence[str], batch_lines: int = BATCH_LINES
) -> dict[str, np.ndarray]:
    """Every count of :data:`BATCH_COUNTS` line by line (one entry per line of ``lines``),
    from the same encoding with token starts as :func:`compute_metrics`: summed over the
    lines they are the corpus's counts."""
    columns: dict[str, list[np.ndarray]] = {name: [] for name in BATCH_COUNTS}
    for batch_of_lines, encoded in tokenizer.encode_batches_starts(batched(lines, batch_lines)):
        batch = EncodedBatch(batch_of_lines, encoded)
        words = encoded.words if encoded.words is not None else batch_words(batch_of_lines)
        line_of_word = np.repeat(np.arange(len(batch_of_lines)), words.counts)
        per_line = functools.partial(np.bincount, line_of_word, minlength=len(batch_of_lines))
        columns["lines"].append(np.ones(len(batch_of_lines), dtype=np.int64))
        columns["tokens"].append(np.asarray(encoded.lengths, dtype=np.int64))
        columns["words"].append(np.asarray(words.counts, dtype=np.int64))
        columns["word_tokens"].append(per_line(weights=batch.per_word).astype(np.int64))
        columns["continued_words"].append(per_line(weights=batch.per_word >= 2).astype(np.int64))
        columns["chars"].append(np.fromiter(map(len, batch_of_lines), np.int64))
        utf8 = (len(line.encode("utf-8")) for line in batch_of_lines)
        columns["utf8_bytes"].append(np.fromiter(utf8, np.int64))
    return {
        name: np.concatenate(parts) if parts else np.zeros(0, np.int64)
        for name, parts in columns.items()
    }


def compute_metrics(
    tokenizer: Tokenizer, corpus: Path, batch_lines: int = BATCH_LINES
) -> tuple[dict[str, float], np.ndarray]:
    """Every metric of :data:`METRICS` of ``tokenizer`` on ``corpus``, and the frequency of
    every vocabulary id.

    Lines are encoded once, in batches of ``batch_lines``, with token starts (for the
    per-word counts); besides one batch, memory holds the id-frequency array.
    """
    id_counts = np.zeros(len(tokenizer.vocab), dtype=np.int64)
    counts = dict.fromkeys(BATCH_COUNTS, 0)
    batches = tokenizer.encode_batches_starts(batched(iter_lines(corpus), batch_lines))
    bar = progress(count_lines(corpus), f"scoring {Path(corpus).name}", log, unit="line")
    for lines, encoded in batches:
        id_counts += np.bincount(encoded.ids, minlength=len(id_counts))
        batch = EncodedBatch(lines, encoded)
        for name, count in BATCH_COUNTS.items():
            counts[name] += count(batch)
        bar.update(len(lines))
    bar.close()
    if counts["lines"] == 0:
        raise TokstudyError(f"{corpus}: no lines to compute metrics on")
    counts |= {name: count(tokenizer, id_counts) for name, count in PASS_COUNTS.items()}
    metrics = {
        name: metric.function(*(counts[count] for count in metric.counts))
        for name, metric in METRICS.items()
    }
    return metrics, id_counts
