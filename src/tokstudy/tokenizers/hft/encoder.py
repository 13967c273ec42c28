"""Text ↔ ids with a trained HFT vocabulary: pre-tokenizer, segmenter and a part cache."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import UNK, TokenStarts
from tokstudy.tokenizers.hft import scan
from tokstudy.tokenizers.hft.part_starts import PartRows, code_points
from tokstudy.tokenizers.hft.pretokenize import UNK_TEXT, Marks, Pretokenizer
from tokstudy.tokenizers.hft.segment import Segmenter
from tokstudy.tokenizers.hft.vocab import HFTVocab


class HFTEncoder:
    """Encodes with ids ``specials`` first, then the HFT vocabulary in its order.

    A character that is not in the vocabulary becomes one ``[UNK]`` (and cuts its word
    there); ``[UNK]`` decodes to U+FFFD. Other special tokens decode to their own string.
    The ids of every word and gap seen are cached (up to ``cache_size`` of them), so a
    batch of known words is cut and looked up by compiled code (:mod:`.scan`).
    """

    def __init__(
        self,
        vocab: HFTVocab,
        marks: Marks,
        specials: Sequence[str],
        cache_size: int = 1_000_000,
    ) -> None:
        self.hft_vocab = vocab
        self.pretokenizer = Pretokenizer(marks)
        self.tokens = [*specials, *vocab.tokens]
        self._offset = len(specials)
        self._unk_id = self.tokens.index(UNK)
        #: what each id contributes to the text that decoding detokenizes
        self._marked_tokens = [UNK_TEXT if token == UNK else token for token in self.tokens]
        self._segmenter = Segmenter(vocab.tokens, vocab.freqs)
        self._table = scan.char_classes()
        self._cache_size = cache_size
        self._reset_cache()

    def _reset_cache(self) -> None:
        # cached parts: code points part_cps[part_off[r]:part_off[r + 1]] of row r, its
        # hash, a hash table of the rows (slots), and its ids flat[row_start[r]:][:row_len[r]]
        self._rows = 0
        self._arrays = {
            name: np.zeros(1, dtype=np.int64)
            for name in ("part_cps", "part_off", "part_hash", "flat", "row_start", "row_len")
        }
        self._used = dict.fromkeys(self._arrays, 0) | {"part_off": 1}
        self._slots = np.full(16, -1, dtype=np.int64)
        self._part_rows = PartRows(self.pretokenizer.marks, self.pretokenizer.detokenize)

    def _view(self, name: str) -> np.ndarray:
        return self._arrays[name][: self._used[name]]

    def _append(self, name: str, values: np.ndarray) -> None:
        """Append to a cache array, doubling its capacity when it is full."""
        array, used = self._arrays[name], self._used[name]
        if used + len(values) > len(array):
            array = np.resize(array, max(2 * len(array), used + len(values)))
            self._arrays[name] = array
        array[used : used + len(values)] = values
        self._used[name] = used + len(values)

    def encode_lines(self, lines: Sequence[str], where: str = "text") -> list[list[int]]:
        """Ids of each line (no special tokens added)."""
        if not lines:
            return []
        ids, ids_off, *_ = self._encode(lines, where)
        flat = ids.tolist()
        return [flat[a:b] for a, b in pairwise(ids_off.tolist())]

    def encode_starts(self, lines: Sequence[str], where: str = "text") -> TokenStarts:
        """Ids of a batch of lines, flat, with each token's start as the generic decoded-
        prefix starts give it (see :mod:`.part_starts`)."""
        ids, ids_off, rows, row_lines, cps, line_off = self._encode(lines, where)
        self._sync_part_rows()
        starts = self._part_rows.token_starts(rows, row_lines, cps, line_off)
        return TokenStarts(ids, starts, np.diff(ids_off))

    def _sync_part_rows(self) -> None:
        """Add the cached rows that :attr:`_part_rows` does not have yet."""
        known = len(self._part_rows)
        if known == self._rows:
            return
        starts = self._view("row_start")[known:]
        lengths = self._view("row_len")[known:].tolist()
        base = int(starts[0])
        flat = self._view("flat")[base:].tolist()
        tokens = self._marked_tokens
        self._part_rows.add(
            [
                [tokens[i] for i in flat[a - base : a - base + n]]
                for a, n in zip(starts.tolist(), lengths, strict=True)
            ]
        )

    def _encode(self, lines: Sequence[str], where: str):
        """Ids, their line offsets, the cached rows of the parts and their lines, and the
        code points of ``lines`` with their line offsets."""
        self.pretokenizer.check_lines(lines, where)
        cps, line_off = code_points(lines)
        ids, ids_off, miss_start, miss_end, n_missing, rows, row_lines = self._scan(cps, line_off)
        if n_missing:
            if self._rows + n_missing > self._cache_size:
                self._reset_cache()
                ids, ids_off, miss_start, miss_end, n_missing, *_ = self._scan(cps, line_off)
            text = "".join(lines)
            spans = zip(miss_start.tolist(), miss_end.tolist(), strict=True)
            self._add_rows({text[a:b] for a, b in spans})
            ids, ids_off, _, _, _, rows, row_lines = self._scan(cps, line_off)
        return ids, ids_off, rows, row_lines, cps, line_off

    def _scan(self, cps: np.ndarray, line_off: np.ndarray):
        view = self._view
        return scan.encode_lines(
            cps,
            line_off,
            self._table,
            self._slots,
            view("part_hash"),
            view("part_off"),
            view("part_cps"),
            view("flat"),
            view("row_start"),
            view("row_len"),
        )

    def _add_rows(self, raws: set[str]) -> None:
        """Segment and cache new words and gaps."""
        pretokenizer = self.pretokenizer
        ordered = sorted(raws)
        pretokens = [pretokenizer.encode_part(pretokenizer.is_word(r), r) for r in ordered]
        segmenter = self._segmenter
        ids, ids_off = segmenter.segment_codes(*segmenter.codes.encode(pretokens))
        self._append("row_start", self._used["flat"] + ids_off[:-1])
        self._append("row_len", np.diff(ids_off))
        self._append("flat", np.where(ids < 0, self._unk_id, ids + self._offset))
        cps, part_off = code_points(ordered)
        self._append("part_off", self._used["part_cps"] + part_off[1:])
        self._append("part_cps", cps)
        self._append("part_hash", scan.hash_parts(cps, part_off))
        first_row, self._rows = self._rows, self._rows + len(ordered)
        if 2 * self._rows + 2 > len(self._slots):
            self._slots = np.full(1 << (4 * self._rows).bit_length(), -1, dtype=np.int64)
            first_row = 0
        scan.insert_rows(self._slots, self._view("part_hash"), first_row)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``; exact for ids of text whose characters were all in training."""
        size = len(self.tokens)
        bad = [i for i in ids if not 0 <= i < size]
        if bad:
            raise TokstudyError(f"hft: id {bad[0]} is outside the vocabulary (size {size})")
        return self.decode_tokens([self.tokens[i] for i in ids])

    def decode_tokens(self, tokens: Sequence[str]) -> str:
        """Text of token strings (as :meth:`decode` of their ids)."""
        return self.pretokenizer.detokenize(
            "".join(UNK_TEXT if token == UNK else token for token in tokens)
        )
