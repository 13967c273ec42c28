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
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from tokstudy.corpus_io import batched, iter_lines
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer, TokenStarts
from tokstudy.words import batch_words

log = logging.getLogger(__name__)

METRICS: tuple[str, ...] = (
    "f95",
    "mu",
    "nu",
    "fertility",
    "continued_words",
    "unk_rate",
    "chars_per_token",
    "bytes_per_token",
    "vocab_used",
    "renyi_efficiency",
    "lines",
    "words",
    "tokens",
    "vocab_size",
)
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


def renyi_efficiency(frequencies: np.ndarray, vocab_size: int, alpha: float = RENYI_ALPHA) -> float:
    """Rényi entropy of order ``alpha`` of the token distribution over log(vocab_size)."""
    ranked = _ranked(frequencies)
    if not len(ranked) or vocab_size < 2:
        return math.nan
    p = ranked / ranked.sum()
    entropy = math.log(float((p**alpha).sum())) / (1.0 - alpha)
    return entropy / math.log(vocab_size)


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


def compute_metrics(
    tokenizer: Tokenizer, corpus: Path, batch_lines: int = BATCH_LINES
) -> tuple[dict[str, float], np.ndarray]:
    """All metrics of ``tokenizer`` on ``corpus`` and the frequency of every vocabulary id.

    Lines are encoded once, in batches of ``batch_lines``, with token starts (for the
    per-word counts); besides one batch, memory holds the id-frequency array.
    """
    vocab_size = len(tokenizer.vocab)
    counts = np.zeros(vocab_size, dtype=np.int64)
    lines = tokens = chars = utf8_bytes = n_words = word_tokens = continued = 0
    for batch, encoded in tokenizer.encode_batches_starts(batched(iter_lines(corpus), batch_lines)):
        counts += np.bincount(encoded.ids, minlength=vocab_size)
        per_word = tokens_per_word(batch, encoded)
        n_words += len(per_word)
        word_tokens += int(per_word.sum())
        continued += int((per_word >= 2).sum())
        lines += len(batch)
        tokens += len(encoded.ids)
        text = "\n".join(batch)
        chars += len(text) - len(batch) + 1
        utf8_bytes += len(text.encode("utf-8")) - len(batch) + 1
        if lines % (batch_lines * 10) == 0:
            log.info("%d lines, %d tokens", lines, tokens)
    if lines == 0:
        raise TokstudyError(f"{corpus}: no lines to compute metrics on")
    frequencies = counts.copy()
    frequencies[list(tokenizer.special_ids)] = 0
    unk = tokenizer.unk_id
    text_vocab = vocab_size - len(tokenizer.special_ids)
    metrics = {
        "f95": f95(frequencies),
        "mu": tokens / lines,
        "nu": nu(frequencies),
        "fertility": word_tokens / n_words if n_words else math.nan,
        "continued_words": continued / n_words if n_words else math.nan,
        "unk_rate": (counts[unk] / tokens if tokens else math.nan) if unk is not None else 0.0,
        "chars_per_token": chars / tokens if tokens else math.nan,
        "bytes_per_token": utf8_bytes / tokens if tokens else math.nan,
        "vocab_used": int((frequencies > 0).sum()) / text_vocab,
        "renyi_efficiency": renyi_efficiency(frequencies, vocab_size),
        "lines": lines,
        "words": n_words,
        "tokens": tokens,
        "vocab_size": vocab_size,
    }
    return metrics, counts
