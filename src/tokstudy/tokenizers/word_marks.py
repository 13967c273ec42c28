"""Token starts from word marks: for tokenizers whose pieces carry SentencePiece's ``▁``.

A piece that starts with ``▁`` opens the next whitespace word of its line, the others
continue it. Where a tokenizer splits words at the marks only (SentencePiece, and HF
``tokenizers`` pipelines with a splitting ``Metaspace`` pre-tokenizer), this maps every token
to its word from the ids alone, in array operations over the batch, with no per-token
offsets: the metric pass's fast path. A line whose marks do not match its words (a
normaliser that changed the spacing) takes the library's offsets instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from tokstudy.tokenizers.base import TokenStarts
from tokstudy.words import batch_words

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
    line_of_token = np.repeat(np.arange(len(lines)), lengths)
    opens = opens_word[flat].astype(np.int64)
    opened = np.bincount(line_of_token, weights=opens, minlength=len(lines))
    marked = np.cumsum(opens)
    before_line = np.concatenate(([0], marked))[np.cumsum(lengths) - lengths][line_of_token]
    word_in_line = np.maximum(marked - before_line - 1, 0)
    matched = (opened == words.counts) & (words.counts > 0)
    placed = matched[line_of_token]
    word = words.first[line_of_token[placed]] + word_in_line[placed]
    starts = np.zeros(len(flat), dtype=np.int64)
    starts[placed] = words.begins[word] - words.line_starts[line_of_token[placed]]
    unmatched = np.flatnonzero(~matched & (words.counts > 0))
    if len(unmatched):
        return TokenStarts(flat, starts, lengths, words), unmatched
    word_of_token = np.full(len(flat), -1, dtype=np.int64)
    word_of_token[placed] = word
    return TokenStarts(flat, starts, lengths, words, word_of_token), unmatched


def word_mark_starts(tokenizer: Tokenizer, lines: Sequence[str], opens: np.ndarray) -> TokenStarts:
    """The batch's ids (``tokenizer.encode_batch``) with starts from the word marks
    (:func:`metaspace_starts`); the lines whose marks do not match their words take the
    offsets of :meth:`Tokenizer.encode_batch_with_offsets`."""
    batch, unmatched = metaspace_starts(lines, tokenizer.encode_batch(lines), opens)
    if len(unmatched):
        line_ends = np.cumsum(batch.lengths)
        fallback = tokenizer.encode_batch_with_offsets([lines[line] for line in unmatched])
        for line, encoded in zip(unmatched, fallback, strict=True):
            starts = [start for start, _ in encoded.offsets]
            batch.starts[line_ends[line] - len(starts) : line_ends[line]] = starts
    return batch
