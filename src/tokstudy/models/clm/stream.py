"""Text as a token stream: each line's tokens followed by the tokenizer's ``[SEP]`` (the
line's newline); the scored stream starts with one ``[SEP]`` (:mod:`tokstudy.models.clm`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.training.data_fit import unit_counts


def check_vocabulary(tokenizer: Any, where: str) -> None:
    """A one-line error unless ``tokenizer`` has a decodable vocabulary: ids 0…V-1, each
    a token string, and the ``[CLS]`` / ``[SEP]`` tokens that mark text start and line ends."""
    vocab = tokenizer.get_vocab()
    size = len(tokenizer)
    if not vocab or set(vocab.values()) != set(range(size)):
        raise TokstudyError(
            f"{where}: the tokenizer has no decodable vocabulary (its {len(vocab)} vocabulary "
            f"ids are not 0..{size - 1})"
        )
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise TokstudyError(
            f"{where}: the tokenizer has no [CLS] / [SEP] token to mark text start and line ends"
        )


def line_stream(ids: np.ndarray, offsets: np.ndarray, eol_id: int) -> np.ndarray:
    """The tokens of each line (``ids[offsets[i]:offsets[i+1]]``), each line followed by
    ``eol_id``, as one int64 array."""
    return np.insert(np.asarray(ids, dtype=np.int64), np.asarray(offsets[1:]), eol_id)


#: lines between the stream positions a :class:`LineStream` keeps in memory: finding a
#: position's line reads at most this many line offsets
LINE_INDEX_STRIDE = 1024


class LineStream:
    """Lines ``first … last-1`` of a corpus as :func:`line_stream` gives them, read a block
    at a time and never materialised: a training stream of any size.

    ``ids`` and ``offsets`` as in :class:`tokstudy.models.data.TokenCorpus` (line ``i`` is
    ``ids[offsets[i]:offsets[i + 1]]``; arrays on disk or in memory). Position ``p`` of the
    stream lies in line ``l`` where ``start(l) <= p < start(l + 1)``, ``start(l) =
    offsets[l] - offsets[first] + l - first`` (each earlier line adds its end-of-line
    token): the stream keeps ``start`` of every :data:`LINE_INDEX_STRIDE`-th line, and a
    lookup reads the offsets of one stride.
    """

    def __init__(
        self, ids: np.ndarray, offsets: np.ndarray, eol_id: int, first: int = 0, last: int = -1
    ) -> None:
        self.ids = ids
        self.offsets = offsets
        self.eol_id = eol_id
        self.first = first
        self.last = len(offsets) - 1 if last < 0 else last
        self.base = int(offsets[first])
        self.index_lines = np.arange(first, self.last, LINE_INDEX_STRIDE, dtype=np.int64)
        self.index_starts = self._start(self.index_lines, offsets[self.index_lines])

    def __len__(self) -> int:
        return int(self.offsets[self.last]) - self.base + self.last - self.first

    def _start(self, lines: np.ndarray, line_offsets: np.ndarray) -> np.ndarray:
        """Stream position of the first token of each line (``last``: the stream's end),
        given the lines' offsets."""
        return np.asarray(line_offsets, dtype=np.int64) - self.base + lines - self.first

    def _line_at(self, positions: np.ndarray) -> np.ndarray:
        """The line each stream position lies in (one read of offsets per stride touched)."""
        found = np.empty(len(positions), dtype=np.int64)
        strides = np.searchsorted(self.index_starts, positions, side="right") - 1
        for stride in np.unique(strides):
            low = int(self.index_lines[stride])
            lines = np.arange(low, min(low + LINE_INDEX_STRIDE, self.last) + 1)
            starts = self._start(lines, self.offsets[low : lines[-1] + 1])
            here = strides == stride
            found[here] = low + np.searchsorted(starts, positions[here], side="right") - 1
        return found

    def blocks(self, starts: np.ndarray, length: int) -> np.ndarray:
        """Rows ``stream[s : s + length]`` for every start ``s`` (int64), stacked."""
        starts = np.asarray(starts, dtype=np.int64)
        if len(starts) and (starts.min() < 0 or starts.max() + length > len(self)):
            raise IndexError(f"a block of {length} past the stream's {len(self)} tokens")
        firsts, lasts = np.split(self._line_at(np.concatenate([starts, starts + length - 1])), 2)
        rows = np.empty((len(starts), length), dtype=np.int64)
        for row, (start, first, last) in enumerate(zip(starts, firsts, lasts, strict=True)):
            offsets = np.asarray(self.offsets[first : last + 2], dtype=np.int64)
            tokens = line_stream(
                self.ids[offsets[0] : offsets[-1]], offsets - offsets[0], self.eol_id
            )
            skip = start - self._start(np.array([first]), offsets[:1])[0]
            rows[row] = tokens[skip : skip + length]
        return rows

    def counts(
        self, vocabulary_items: int, chunks: Iterable[np.ndarray] | None = None
    ) -> np.ndarray:
        """How often each id occurs in the stream (the end-of-line token once per line);
        ``chunks``: the stream's ids read in pieces (:meth:`TokenCorpus.chunks`), so a
        corpus on disk is not read into memory whole (default: its slice of ``ids``)."""
        if chunks is None:
            chunks = [np.asarray(self.ids[self.base : int(self.offsets[self.last])])]
        counts = unit_counts(chunks, vocabulary_items)
        counts[self.eol_id] += self.last - self.first
        return counts

    def _lines(self, first: int, last: int) -> np.ndarray:
        """The stream of lines ``first … last-1`` as one array (:func:`line_stream`)."""
        offsets = np.asarray(self.offsets[first : last + 1], dtype=np.int64)
        return line_stream(self.ids[offsets[0] : offsets[-1]], offsets - offsets[0], self.eol_id)

    def array(self) -> np.ndarray:
        """The whole stream as one array: for short streams only (validation text)."""
        return self._lines(self.first, self.last)


def encode_lines(tokenizer: Any, lines: Sequence[str]) -> list[list[int]]:
    """Each line's token ids (no special tokens)."""
    return tokenizer(list(lines), add_special_tokens=False)["input_ids"]


def scored_stream(encoded: Sequence[Sequence[int]], sep_id: int) -> np.ndarray:
    """``[SEP]``, then each line's tokens followed by ``[SEP]`` (the scored stream)."""
    offsets = np.cumsum([0, *map(len, encoded)])
    flat = np.fromiter((i for ids in encoded for i in ids), dtype=np.int64, count=offsets[-1])
    return np.concatenate([[sep_id], line_stream(flat, offsets, sep_id)]).astype(np.int64)


def line_bytes(lines: Sequence[str]) -> np.ndarray:
    """UTF-8 bytes of each line with its newline (the scored text)."""
    return np.array([len(line.encode("utf-8")) + 1 for line in lines], dtype=np.int64)
