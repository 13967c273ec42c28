"""BBPE: byte-level BPE with word boundaries (Wei et al., 2021), adapter ``bbpe``.

Pipeline (details in :mod:`~tokstudy.tokenizers.bbpe.units` and
:mod:`~tokstudy.tokenizers.bbpe.learner`):

1. every CJK, punctuation and whitespace character becomes a unit of its own, runs of
   other characters are units (words); a single space between two words is implicit;
2. each unit becomes its UTF-8 bytes; the first byte is *leading*, the rest *trailing*;
3. BPE (HF ``tokenizers``) is learned inside units, so merges never cross a unit
   boundary;
4. the vocabulary holds the 5 special tokens, all 256 bytes in leading form (``E8``) and
   all 256 in trailing form (``##A4``), then the learned merges (``E895``, ``##95A4``).

The 512 byte tokens count toward the requested size: the smallest reachable size is
517 (261 with ``word_boundary: none``), a smaller request raises
:class:`~tokstudy.errors.VocabSizeError` (``size_policy: adjust`` keeps 517).
A character never seen in training falls back to byte tokens, so encoding never produces
``[UNK]`` and decoding is lossless for every string of Unicode scalar values.

Parameters (``spec.params``): ``word_boundary``: ``leading_trailing`` (default) or
``none`` (the "WWB" ablation: one form per byte, no ``##``; every whitespace character is
then an explicit token, since unit starts are no longer visible).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models

from tokstudy.corpus_io import iter_lines
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Encoded, Tokenizer, TrainSpec
from tokstudy.tokenizers.bbpe.learner import learn_bpe
from tokstudy.tokenizers.bbpe.units import (
    TRAILING_PREFIX,
    hex_to_symbols,
    join_units,
    split_units,
    symbols_to_hex,
    to_symbols,
)
from tokstudy.tokenizers.bytelevel_adapter import checked_params
from tokstudy.tokenizers.hf_adapter import check_size

if TYPE_CHECKING:
    from tokstudy.tokenizers.bbpe.transformers_tokenizer import BBPETransformersTokenizer

WORD_BOUNDARY_MODES = ("leading_trailing", "none")
MODEL_FILE = "bbpe.json"
FORMAT_VERSION = 1


def marks_word_boundaries(word_boundary: str) -> bool:
    """Whether a ``word_boundary`` value asks for leading/trailing forms (validated)."""
    if word_boundary not in WORD_BOUNDARY_MODES:
        raise TokstudyError(
            f"bbpe: parameter 'word_boundary' must be one of "
            f"{', '.join(WORD_BOUNDARY_MODES)}, got {word_boundary!r}"
        )
    return word_boundary == "leading_trailing"


class BBPE(Tokenizer):
    """Byte-level subwords with leading/trailing byte tokens; ids index :attr:`vocab`."""

    name = "bbpe"
    lossless = True
    defaults: ClassVar[dict[str, Any]] = {"word_boundary": "leading_trailing"}

    def __init__(self, word_boundary: str, vocab: list[str], merges: list[tuple[str, str]]):
        """A BBPE tokenizer from hex-form vocabulary (id order) and merges (rank order)."""
        self._marked = marks_word_boundaries(word_boundary)
        self.word_boundary = word_boundary
        self._vocab = vocab
        self._merges = merges
        symbol_ids = {hex_to_symbols(token): i for i, token in enumerate(vocab)}
        prefix = {"continuing_subword_prefix": TRAILING_PREFIX} if self._marked else {}
        model = models.BPE(
            vocab=symbol_ids,
            merges=[(hex_to_symbols(left), hex_to_symbols(right)) for left, right in merges],
            **prefix,
        )
        self._bpe = HFTokenizer(model)

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> BBPE:
        """Learn merges from a corpus file; ``spec.seed`` is unused (training is deterministic)."""
        word_boundary = checked_params(cls.name, spec.params, cls.defaults)["word_boundary"]
        marked = marks_word_boundaries(word_boundary)
        if spec.vocab_size is None:
            raise TokstudyError(f"{cls.name} ({spec.label}): vocab_size is required")
        os.environ["RAYON_NUM_THREADS"] = str(max(1, spec.threads))
        try:
            vocab, merges = learn_bpe(iter_lines(corpus), spec.vocab_size, marked)
        except UnicodeDecodeError as error:
            raise TokstudyError(f"{corpus}: not valid UTF-8 ({error})") from error
        trained = cls(
            word_boundary,
            [symbols_to_hex(token) for token in vocab],
            [(symbols_to_hex(left), symbols_to_hex(right)) for left, right in merges],
        )
        check_size(cls.name, spec, len(trained.vocab))
        return trained

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Token ids of each line; never ``[UNK]``."""
        words = [[to_symbols(unit) for unit in split_units(line, self._marked)] for line in lines]
        encodings = self._bpe.encode_batch_fast(
            words, is_pretokenized=True, add_special_tokens=False
        )
        return [encoding.ids for encoding in encodings]

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Ids with character offsets: each unit's place in the line plus the token's byte
        offsets inside the unit (a token ending inside a character ends before it)."""
        units = [split_units(line, self._marked) for line in lines]
        encodings = self._bpe.encode_batch(
            [[to_symbols(unit) for unit in line_units] for line_units in units],
            is_pretokenized=True,
            add_special_tokens=False,
        )
        encoded = []
        for line, line_units, encoding in zip(lines, units, encodings, strict=True):
            starts, position = [], 0
            for unit in line_units:
                position = line.index(unit, position)
                starts.append(position)
                position += len(unit)
            unit_bytes = [unit.encode("utf-8") for unit in line_units]
            offsets = [
                (
                    starts[word] + len(unit_bytes[word][:begin].decode("utf-8", "ignore")),
                    starts[word] + len(unit_bytes[word][:end].decode("utf-8", "ignore")),
                )
                for word, (begin, end) in zip(encoding.word_ids, encoding.offsets, strict=True)
            ]
            encoded.append(Encoded(encoding.ids, offsets))
        return encoded

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ids; the inverse of :meth:`encode_batch`."""
        return self.detokenize([self._vocab[i] for i in ids])

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Text of hex-form token strings (special tokens as their literal text)."""
        return join_units(tokens, self._marked)

    @property
    def vocab(self) -> list[str]:
        """Token strings (hex pairs, ``##`` on trailing tokens), indexed by id."""
        return self._vocab

    @property
    def merges(self) -> list[tuple[str, str]]:
        """Learned merges in rank order, as hex-form token pairs."""
        return self._merges

    def save(self, directory: Path) -> None:
        """Write ``bbpe.json`` (mode, vocabulary, merges)."""
        self.save_file(Path(directory) / MODEL_FILE)

    def save_file(self, path: Path) -> None:
        """Write the model as one JSON file."""
        data = {
            "tokenizer": self.name,
            "format_version": FORMAT_VERSION,
            "word_boundary": self.word_boundary,
            "vocab": self._vocab,
            "merges": [list(pair) for pair in self._merges],
        }
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", "utf-8")

    @classmethod
    def load(cls, directory: Path) -> BBPE:
        """Read ``bbpe.json``."""
        return cls.load_file(Path(directory) / MODEL_FILE)

    @classmethod
    def load_file(cls, path: Path) -> BBPE:
        """Read a model file written by :meth:`save_file`."""
        path = Path(path)
        if not path.is_file():
            raise TokstudyError(f"{path}: {cls.name} model file not found")
        try:
            data = json.loads(path.read_text("utf-8"))
            if data["format_version"] != FORMAT_VERSION:
                raise TokstudyError(
                    f"{path}: format_version {data['format_version']!r} is not {FORMAT_VERSION}"
                )
            return cls(data["word_boundary"], data["vocab"], [tuple(m) for m in data["merges"]])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise TokstudyError(f"{path}: not a {cls.name} model file ({error})") from error

    def to_transformers(self) -> BBPETransformersTokenizer:
        """A slow ``transformers`` tokenizer with the same ids (see its module for why slow)."""
        from tokstudy.tokenizers.bbpe.transformers_tokenizer import BBPETransformersTokenizer

        return BBPETransformersTokenizer(bbpe=self)
