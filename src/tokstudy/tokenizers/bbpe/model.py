"""A trained BBPE model: vocabulary, merges, encoding, decoding and its one JSON file.

Shared by the ``bbpe`` adapter (:mod:`.adapter`) and its ``transformers`` front end
(:mod:`.transformers_tokenizer`), which therefore do not import each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Encoded
from tokstudy.tokenizers.bbpe.units import (
    TRAILING_PREFIX,
    hex_to_symbols,
    join_units,
    split_units,
    to_symbols,
)

WORD_BOUNDARY_MODES = ("leading_trailing", "none")
MODEL_FILE = "bbpe.json"
FORMAT_VERSION = 1


class BBPEModel:
    """Byte-level subwords with leading/trailing byte tokens; ids index :attr:`vocab`."""

    name = "bbpe"

    def __init__(self, word_boundary: str, vocab: list[str], merges: list[tuple[str, str]]):
        """A model from hex-form vocabulary (id order) and merges (rank order)."""
        if word_boundary not in WORD_BOUNDARY_MODES:
            raise ValueError(f"word_boundary {word_boundary!r} is not one of {WORD_BOUNDARY_MODES}")
        self._marked = word_boundary == "leading_trailing"
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

    def tokenize(self, text: str) -> list[str]:
        """Token strings of one text."""
        return [self._vocab[i] for i in self.encode_batch([text])[0]]

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
    def load_file(cls, path: Path) -> BBPEModel:
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
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as error:
            raise TokstudyError(f"{path}: not a {cls.name} model file ({error})") from error
