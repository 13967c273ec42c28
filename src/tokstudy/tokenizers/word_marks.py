"""Token starts from word marks: for tokenizers whose pieces carry SentencePiece's ``▁``.

A piece that starts with ``▁`` opens the next whitespace word of its line, the others
continue it. Where a tokenizer splits words at the marks only (SentencePiece, and HF
``tokenizers`` pipelines with a splitting ``Metaspace`` pre-tokenizer), this maps every token
to its word from the ids alone, in array operations over the batch, with no per-token
offsets: the metric pass's fast path. A line whose marks do not match its words (a
normaliser that changed the spacing) takes the library's offsets instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from tokstudy.tokenizers.base import TokenStarts
from tokstudy.tokenizers.words import batch_words

if TYPE_CHECKING:
    from tokstudy.tokenizers.base import Tokenizer

#: SentencePiece's word-boundary mark
METASPACE = "▁"


def opens_word(vocab: Sequence[str]) -> np.ndarray:
    """Per id, whether its piece starts with the word mark."""
    return np.fromiter((piece.startswith(METASPACE) for piece in vocab), bool, count=len(vocab))


def metaspace_starts(
    lines: Sequence[str], ids: Sequence[Sequence[int]], opens_word: np.ndarray
) -> tuple[TokenStarts, np.ndarray]:
    """Token starts of SentencePiece ids from their ``▁`` word marks, and the lines left.

    ``opens_word[i]`` says whether piece ``i`` starts with ``▁``. Such a piece opens the
    next whitespace word of its line, the others continue the word (pieces before the
    first mark belong to the first word); each token's start is its word's first
    character, and its word is known (``TokenStarts.word``). Returned with the indices of
    the lines whose pieces open another number of words than the line has (a normaliser
    that changed its spacing): their starts are left at 0 and the batch has no ``word``,
    for the caller to fill in.
    """
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    words = batch_words(lines)
    marked = np.cumsum(opens_word[flat], dtype=np.int64)  # marks up to each token
    marks_before = np.concatenate(([0], marked))  # marks before each token (and the end)
    line_ends = np.cumsum(lengths)
    line_marks_before = marks_before[line_ends - lengths]
    has_words = words.counts > 0
    matched = (marks_before[line_ends] - line_marks_before == words.counts) & has_words
    unmatched = np.flatnonzero(~matched & has_words)
    line_of_token = np.repeat(np.arange(len(lines)), lengths)
    if not len(unmatched) and not lengths[~has_words].any():
        # every token's line matched, so the marks before a line number its words before
        # it: a token's word is the last one opened, or its line's first
        word = np.maximum(marked - 1, words.first[line_of_token])
        starts = words.begins[word] - words.line_starts[line_of_token]
        return TokenStarts(flat, starts, lengths, words, word), unmatched
    word_in_line = np.maximum(marked - line_marks_before[line_of_token] - 1, 0)
    placed = matched[line_of_token]
    word = words.first[line_of_token[placed]] + word_in_line[placed]
    starts = np.zeros(len(flat), dtype=np.int64)
    starts[placed] = words.begins[word] - words.line_starts[line_of_token[placed]]
    if len(unmatched):
        return TokenStarts(flat, starts, lengths, words), unmatched
    word_of_token = np.full(len(flat), -1, dtype=np.int64)
    word_of_token[placed] = word
    return TokenStarts(flat, starts, lengths, words, word_of_token), unmatched


def place_by_word_marks(
    tokenizer: Tokenizer, lines: Sequence[str], ids: Sequence[Sequence[int]], opens: np.ndarray
) -> TokenStarts:
    """The batch's ids (``tokenizer.encode_batch(lines)``) with starts from the word marks
    (:func:`metaspace_starts`); the lines whose marks do not match their words take the
    offsets of :meth:`Tokenizer.encode_batch_with_offsets`."""
    batch, unmatched = metaspace_starts(lines, ids, opens)
    if len(unmatched):
        line_ends = np.cumsum(batch.lengths)
        fallback = tokenizer.encode_batch_with_offsets([lines[line] for line in unmatched])
        for line, encoded in zip(unmatched, fallback, strict=True):
            starts = [start for start, _ in encoded.offsets]
            batch.starts[line_ends[line] - len(starts) : line_ends[line]] = starts
    return batch


def word_mark_starts(tokenizer: Tokenizer, lines: Sequence[str], opens: np.ndarray) -> TokenStarts:
    """:func:`place_by_word_marks` of the batch's ids."""
    return place_by_word_marks(tokenizer, lines, tokenizer.encode_batch(lines), opens)


#: a batch of lines and its ids on their way
_Encoding = tuple[Sequence[str], Future[list[list[int]]]]


def word_mark_batches(
    tokenizer: Tokenizer, batches: Iterable[Sequence[str]], opens: np.ndarray
) -> Iterator[tuple[Sequence[str], TokenStarts]]:
    """:func:`word_mark_starts` of each batch, in order, the library encoding the next batch
    on a worker thread while this one's starts are placed and the caller uses them.

    For libraries that encode outside the GIL (SentencePiece, HF ``tokenizers``): the
    placing is numpy work on one core, which would otherwise wait for the encoding and
    leave the library's cores idle in turn. The results are those of the batches one by one.
    A batch's fallback offsets are encoded while the worker encodes the next batch: both
    libraries encode concurrently from one read-only tokenizer object.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokstudy-encode") as worker:
        pending: _Encoding | None = None
        for lines in batches:
            submitted = (lines, worker.submit(tokenizer.encode_batch, lines))
            if pending is not None:
                yield _placed(tokenizer, pending, opens)
            pending = submitted
        if pending is not None:
            yield _placed(tokenizer, pending, opens)


def _placed(
    tokenizer: Tokenizer, encoding: _Encoding, opens: np.ndarray
) -> tuple[Sequence[str], TokenStarts]:
    lines, ids = encoding
    return lines, place_by_word_marks(tokenizer, lines, ids.result(), opens)
