"""Token starts of HFT-marked encodings (``hft``, ``sp_*_hftpretok``), part by part.

The generic :meth:`~tokstudy.tokenizers.base.Tokenizer.encode_batch_with_offsets` takes
the start of token *k* of a line from the length of the decoded text of tokens 0…k-1
(:func:`~tokstudy.tokenizers.base.prefix_offsets`): one decode per token, quadratic in the
line. Here the same starts come from the line's *parts* (the words and gaps that become
pre-tokens, each encoded on its own): decoding is local to a part except that two words
written back to back (``DaDDbD``) decode with the implicit space between them. So the
decoded length of a prefix is the decoded length of the whole parts before it, one for an
implicit space once the current word's opening mark is in, and the decoded length of the
current part's own prefix, which is computed once per distinct part (:class:`PartRows`).
A prefix ending in U+FFFD moves the start back one, as ``prefix_offsets`` does, and starts
are clipped to the line and never decrease. The result equals the generic starts token for
token (``tests/test_hft_adapter.py`` and ``tests/test_hft_pretok_sentencepiece.py`` hold it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import regex

from tokstudy.tokenizers.hft.pretokenize import UNK_TEXT, Marks

_REPLACEMENT = ord(UNK_TEXT)


def code_points(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of the concatenated ``texts`` and the offset where each starts."""
    joined = "".join(texts).encode("utf-32-le", "surrogatepass")
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=offsets[1:])
    return np.frombuffer(joined, dtype="<u4").astype(np.int64), offsets


class PartRows:
    """Decoded prefix lengths of the tokens of distinct parts, row by row.

    Row ``r`` holds one part: for each of its tokens *k*, the decoded length of the part's
    tokens 0…k-1 (``prefix``), whether that text ends in U+FFFD (``prefix_unk``) and
    whether their marked text is not empty (``opened``: a word's opening mark is in); for
    the whole part, its decoded length (``length``), whether it ends in U+FFFD
    (``ends_unk``) and whether it is a word (``word``).
    """

    def __init__(self, marks: Marks, detokenize: Callable[[str], str]) -> None:
        self._detokenize = detokenize
        self._token_mark = marks.token
        self._silent = np.array([ord(m) for m in (marks.token, marks.upper, marks.upper_run,
                                                  marks.upper_end)], dtype=np.int64)  # fmt: skip
        self._irregular = regex.compile(
            f"{regex.escape(UNK_TEXT)}|{regex.escape(marks.space)}[0-9a-f]{{4}}"
        )
        self.first = np.zeros(1, dtype=np.int64)  # first token of each row, and the end
        self.prefix = np.zeros(0, dtype=np.int64)
        self.prefix_unk = np.zeros(0, dtype=np.bool_)
        self.opened = np.zeros(0, dtype=np.bool_)
        self.length = np.zeros(0, dtype=np.int64)
        self.ends_unk = np.zeros(0, dtype=np.bool_)
        self.word = np.zeros(0, dtype=np.bool_)

    def __len__(self) -> int:
        return len(self.length)

    def add(self, parts: Sequence[Sequence[str]]) -> None:
        """Append one row per part, given as the marked texts of its tokens.

        A token's marked text is what it contributes to the string the adapter
        detokenizes (U+FFFD for ``[UNK]``). Most parts decode to one character per
        character that is not a token or case mark; parts with U+FFFD or a whitespace
        escape are decoded prefix by prefix.
        """
        texts = [text for part in parts for text in part]
        counts = np.fromiter(map(len, parts), np.int64, len(parts))
        widths = np.fromiter(map(len, texts), np.int64, len(texts))
        joined = "".join(texts)
        points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        visible = np.zeros(len(points) + 1, dtype=np.int64)
        np.cumsum(~np.isin(points, self._silent), out=visible[1:])
        token_at = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(widths, out=token_at[1:])
        part_first = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(counts, out=part_first[1:])
        part_of_token = np.repeat(np.arange(len(parts)), counts)
        part_start = token_at[part_first[:-1]]
        prefix = visible[token_at[:-1]] - visible[part_start[part_of_token]]
        opened = token_at[:-1] > part_start[part_of_token]
        length = visible[token_at[part_first[1:]]] - visible[part_start]
        prefix_unk = np.zeros(len(texts), dtype=np.bool_)
        ends_unk = np.zeros(len(parts), dtype=np.bool_)
        starts = [m.start() for m in self._irregular.finditer(joined)]
        irregular = np.unique(np.searchsorted(token_at, starts, side="right") - 1)
        for part in np.unique(part_of_token[irregular]).tolist():
            first = part_first[part]
            decoded = [self._detokenize("".join(parts[part][:k])) for k in range(counts[part] + 1)]
            prefix[first : first + counts[part]] = [len(text) for text in decoded[:-1]]
            prefix_unk[first : first + counts[part]] = [t.endswith(UNK_TEXT) for t in decoded[:-1]]
            length[part] = len(decoded[-1])
            ends_unk[part] = decoded[-1].endswith(UNK_TEXT)
        part_end = token_at[part_first[1:]]
        first_point = points[np.minimum(part_start, max(len(points) - 1, 0))]
        word = (part_end > part_start) & (first_point == ord(self._token_mark))
        self.first = np.concatenate([self.first, self.first[-1] + part_first[1:]])
        self.prefix = np.concatenate([self.prefix, prefix])
        self.prefix_unk = np.concatenate([self.prefix_unk, prefix_unk])
        self.opened = np.concatenate([self.opened, opened])
        self.length = np.concatenate([self.length, length])
        self.ends_unk = np.concatenate([self.ends_unk, ends_unk])
        self.word = np.concatenate([self.word, word])

    def token_starts(
        self, rows: np.ndarray, line_of_part: np.ndarray, points: np.ndarray, line_off: np.ndarray
    ) -> np.ndarray:
        """Start of every token of a batch whose lines are the parts ``rows`` (in order;
        ``line_of_part``: each part's line; ``points``/``line_off``: the lines' code points
        and where each line starts in them)."""
        n_lines = len(line_off) - 1
        counts = self.first[rows + 1] - self.first[rows]
        same_line = np.zeros(len(rows), dtype=np.bool_)
        same_line[1:] = line_of_part[1:] == line_of_part[:-1]
        word = self.word[rows]
        merged = word & np.r_[False, word[:-1]] & same_line
        grows = merged + self.length[rows]
        before = np.cumsum(grows) - grows
        line_first = np.searchsorted(line_of_part, np.arange(n_lines))
        line_base = np.r_[before, 0][line_first]
        before = before - line_base[line_of_part]
        before_unk = np.r_[False, self.ends_unk[rows][:-1]] & same_line
        part = np.repeat(np.arange(len(rows)), counts)
        part_first = np.cumsum(counts) - counts
        k = np.arange(len(part)) - part_first[part]
        token = self.first[rows][part] + k
        own, own_unk = self.prefix[token], self.prefix_unk[token]
        joined = merged[part] & self.opened[token]
        decoded = before[part] + joined + own
        ends_unk = np.where(own > 0, own_unk, ~joined & before_unk[part])
        line = line_of_part[part]
        line_length = np.diff(line_off)[line]
        inside = np.minimum(decoded - 1, np.maximum(line_length - 1, 0))
        previous = points[np.minimum(line_off[line] + inside, max(len(points) - 1, 0))]
        back = ends_unk & ((decoded - 1 >= line_length) | (previous != _REPLACEMENT))
        clipped = np.minimum(decoded - back, line_length)
        span = int(line_length.max(initial=0)) + 1
        return np.maximum.accumulate(clipped + line * span) - line * span
