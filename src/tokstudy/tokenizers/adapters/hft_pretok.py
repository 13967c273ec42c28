"""SentencePiece (BPE or Unigram) trained and applied on HFT pre-tokens.

Each line is pre-tokenized with :mod:`.pretokenize` and its pre-tokens are joined by
single spaces (they never contain whitespace), so SentencePiece pieces never cross
pre-token boundaries. Training writes the pre-tokenized corpus to a temporary file and
trains :mod:`tokstudy.tokenizers.adapters.sentencepiece` on it; decoding joins the pieces,
drops SentencePiece's word boundaries and undoes the pre-tokenization.

Params: ``marks`` (as for ``hft``); every other key goes to ``SentencePieceTrainer``, with
two defaults changed for marked text: ``normalization_rule_name: identity`` (so decoding
is exact) and ``split_by_unicode_script: false`` (the marks, Private Use Area characters,
may join the letters of their word). Lossless for text whose characters were all seen in
training, except U+2581 (SentencePiece's own word-boundary symbol); ``[UNK]`` decodes to
U+FFFD.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from itertools import chain, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.sentencepiece import (
    MODEL_FILE,
    SentencePieceBPE,
    SentencePieceUnigram,
)
from tokstudy.tokenizers.base import UNK, Tokenizer, TokenStarts, TrainSpec, corpus_lines
from tokstudy.tokenizers.hft.part_starts import PartRows, code_points
from tokstudy.tokenizers.hft.pretokenize import (
    MARKS_PARAM,
    UNK_TEXT,
    WORD_BOUNDARY,
    Marks,
    Pretokenizer,
    pieces_to_text,
)
from tokstudy.tokenizers.params import Param

if TYPE_CHECKING:
    from tokstudy.tokenizers.hft.pretok_transformers_tokenizer import HFTSentencePieceTokenizer

CONFIG_FILE = "hft_pretok.json"
_OPENS, _INSIDE = 1, 2  # where a piece has SentencePiece's ``▁``
SP_DEFAULTS = {"normalization_rule_name": "identity", "split_by_unicode_script": False}


class _PretokenizedSentencePiece(Tokenizer):
    """A SentencePiece adapter applied to HFT pre-tokens."""

    inner_class: ClassVar[type[SentencePieceBPE] | type[SentencePieceUnigram]]
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {"marks": MARKS_PARAM}
    open_params = True  # the rest goes to SentencePiece, checked there

    def __init__(self, inner: SentencePieceBPE | SentencePieceUnigram, marks: Marks) -> None:
        self.inner = inner
        self.marks = marks
        self.pretokenizer = Pretokenizer(marks)
        # decoded prefix lengths of the pre-tokens' pieces (token starts), by their ids
        self._rows = PartRows(marks, self.pretokenizer.detokenize)
        self._row_of: dict[tuple[int, ...], int] = {}

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> _PretokenizedSentencePiece:
        """Pre-tokenize ``corpus`` into a temporary file and train SentencePiece on it."""
        params = dict(spec.params)
        marks = Marks.from_param(params.pop("marks"))
        pretokenizer = Pretokenizer(marks)
        with tempfile.TemporaryDirectory(prefix="tokstudy-hftpretok-") as tmp:
            pretokenized = Path(tmp) / "pretokenized.txt"
            with open(pretokenized, "w", encoding="utf-8", newline="\n") as out:
                for number, line in enumerate(corpus_lines(corpus), start=1):
                    pretokens = pretokenizer.pretokenize(line, f"{corpus}:{number}")
                    out.write(" ".join(pretokens) + "\n")
            inner_spec = replace(spec, params=SP_DEFAULTS | params)
            try:
                inner = cls.inner_class.train(pretokenized, inner_spec)
            except TokstudyError as err:  # name this adapter, not the inner one
                message = str(err).replace(cls.inner_class.name, cls.name, 1)
                raise type(err)(message) from err
        return cls(inner, marks)

    def _pretokenized(self, lines: Sequence[str]) -> list[str]:
        self.pretokenizer.check_lines(lines, f"{self.name} encode")
        return [" ".join(self.pretokenizer.pretokens(line)) for line in lines]

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Ids of each line: pre-tokenize, then SentencePiece."""
        return self.inner.encode_batch(self._pretokenized(lines))

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """Ids of a batch with the generic decoded-prefix starts, computed pre-token by
        pre-token (:mod:`.part_starts`); where the pieces do not open each pre-token with
        ``▁`` (e.g. ``split_by_whitespace: false``), the generic starts."""
        pretokenized = self._pretokenized(lines)
        per_line = self.inner.encode_batch(pretokenized)
        lengths = np.fromiter(map(len, per_line), np.int64, len(per_line))
        ids = np.fromiter(chain.from_iterable(per_line), np.int64, int(lengths.sum()))
        opens = ids[self._piece_marks[ids] == _OPENS]
        pretokens = [len(text.split(" ")) if text else 0 for text in pretokenized]
        if (self._piece_marks[ids] == _INSIDE).any() or len(opens) != sum(pretokens):
            return super().encode_batch_starts(lines)
        rows = self._part_rows(ids)
        points, line_off = code_points(lines)
        line_of_part = np.repeat(np.arange(len(lines)), pretokens)
        starts = self._rows.token_starts(rows, line_of_part, points, line_off)
        return TokenStarts(ids, starts, lengths)

    @cached_property
    def _piece_marks(self) -> np.ndarray:
        """Per id: whether its piece opens with ``▁``, has it elsewhere, or neither."""
        return np.array(
            [
                _OPENS if p.startswith(WORD_BOUNDARY) else _INSIDE if WORD_BOUNDARY in p else 0
                for p in self.vocab
            ],
            dtype=np.int8,
        )

    def _part_rows(self, ids: np.ndarray) -> np.ndarray:
        """The :class:`PartRows` row of each pre-token's pieces (``ids`` cut where a piece
        opens with ``▁``), adding the pre-tokens not seen before."""
        cuts = np.flatnonzero(self._piece_marks[ids] == _OPENS).tolist()
        flat = ids.tolist()
        keys = [tuple(flat[a:b]) for a, b in pairwise([*cuts, len(flat)])]
        row_of = self._row_of
        new = sorted({key for key in keys if key not in row_of})
        if new:
            vocab = self.vocab
            marked = [
                [
                    UNK_TEXT
                    if vocab[i] == UNK
                    else vocab[i].replace(WORD_BOUNDARY, "").replace(" ", "")
                    for i in key
                ]
                for key in new
            ]
            row_of.update(zip(new, range(len(self._rows), len(self._rows) + len(new)), strict=True))
            self._rows.add(marked)
        return np.fromiter(map(row_of.__getitem__, keys), np.int64, len(keys))

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``: SentencePiece pieces, then HFT detokenization."""
        vocab = self.vocab
        return pieces_to_text([vocab[i] for i in ids], self.pretokenizer)

    @property
    def vocab(self) -> list[str]:
        """The SentencePiece pieces."""
        return self.inner.vocab

    def save(self, directory: Path) -> None:
        """SentencePiece's model file and ``hft_pretok.json`` (the marks)."""
        self.inner.save(directory)
        (Path(directory) / CONFIG_FILE).write_text(
            json.dumps({"marks": self.marks.as_dict()}, indent=2) + "\n", encoding="utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> _PretokenizedSentencePiece:
        """Read what :meth:`save` wrote."""
        config = Path(directory) / CONFIG_FILE
        if not config.is_file():
            raise TokstudyError(f"{directory}: no {CONFIG_FILE}")
        marks = Marks.from_param(json.loads(config.read_text(encoding="utf-8")).get("marks"))
        return cls(cls.inner_class.load(directory), marks)

    def to_transformers(self) -> HFTSentencePieceTokenizer:
        """A ``transformers`` tokenizer with the same ids (:class:`HFTSentencePieceTokenizer`)."""
        from tokstudy.tokenizers.hft.pretok_transformers_tokenizer import HFTSentencePieceTokenizer

        with tempfile.TemporaryDirectory(prefix="tokstudy-hftpretok-") as tmp:
            self.inner.save(Path(tmp))
            return HFTSentencePieceTokenizer(
                vocab_file=str(Path(tmp) / MODEL_FILE), marks=self.marks.as_dict()
            )


class PretokenizedSentencePieceBPE(_PretokenizedSentencePiece):
    """SentencePiece BPE on HFT pre-tokens."""

    name = "sp_bpe_hftpretok"
    inner_class = SentencePieceBPE


class PretokenizedSentencePieceUnigram(_PretokenizedSentencePiece):
    """SentencePiece Unigram on HFT pre-tokens."""

    name = "sp_unigram_hftpretok"
    inner_class = SentencePieceUnigram
