"""SentencePiece BPE and Unigram (Kudo & Richardson, 2018) behind the tokstudy interface.

Defaults follow the HFT paper: ``character_coverage`` 1.0 (set it per language, e.g. 0.98
for Japanese), SentencePiece's ``nmt_nfkc`` normalisation. Every key of the adapter's
``params`` is passed to ``SentencePieceTrainer`` unchanged, so any trainer option can be set
from the config. The five special tokens are part of the vocabulary: ``[UNK]`` is
SentencePiece's unknown piece, the other four are control symbols that never stand for text.

Round trip: ``decode(encode(text)) == text`` holds for text that is NFKC-stable, uses single
spaces between words, has no leading or trailing whitespace and only characters seen in
training (SentencePiece normalises whitespace and maps unseen characters to ``[UNK]``).
"""

from __future__ import annotations

import io
import logging
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import sentencepiece as spm

from tokstudy.corpus_io import iter_lines
from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import (
    CLS,
    MASK,
    PAD,
    SEP,
    SPECIAL_TOKEN_KWARGS,
    SPECIAL_TOKENS,
    UNK,
    Encoded,
    Tokenizer,
    TrainSpec,
    prefix_offsets,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

MODEL_FILE = "spm.model"
_TOO_SMALL = re.compile(r"smaller than required_chars\. (\d+) vs (\d+)")
_WORD = re.compile(r"\S+")
METASPACE = "▁"
_TOO_LARGE = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")


def _trainer_options(
    model_type: str, spec: TrainSpec, corpus: Path, writer: io.BytesIO
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "character_coverage": 1.0,
        "normalization_rule_name": "nmt_nfkc",
        "input_sentence_size": 2_000_000,
        "shuffle_input_sentence": True,
    }
    options.update(spec.params)
    options.update(
        sentence_iterator=iter_lines(corpus),
        model_writer=writer,
        model_type=model_type,
        vocab_size=spec.vocab_size,
        num_threads=max(1, spec.threads),
        unk_id=0,
        unk_piece=UNK,
        bos_id=-1,
        eos_id=-1,
        pad_id=-1,
        control_symbols=[PAD, CLS, SEP, MASK],
        minloglevel=1,
    )
    return options


def _reachable_size(message: str, requested: int) -> int | None:
    """The size SentencePiece says it can reach, parsed from its error message."""
    if match := _TOO_SMALL.search(message):
        return int(match.group(2)) + len(SPECIAL_TOKENS)
    if match := _TOO_LARGE.search(message):
        return int(match.group(2))
    return None


def metaspace_offsets(line: str, pieces: Sequence[str]) -> list[tuple[int, int]] | None:
    """Offsets of SentencePiece pieces in ``line``, from their ``▁`` word marks.

    A piece that starts with ``▁`` opens the next whitespace word of the line and starts at
    the space before it; the other pieces follow inside that word (clipped to it).
    ``None`` when the pieces open another number of words than the line has.
    """
    words = [match.span() for match in _WORD.finditer(line)]
    if not words or sum(piece.startswith(METASPACE) for piece in pieces) != len(words):
        return None
    offsets, word, position = [], -1, 0
    for piece in pieces:
        if piece.startswith(METASPACE) or word < 0:
            word += 1
            begin, end = words[word]
            start = max(begin - 1, 0)
            position = begin + len(piece) - 1
        else:
            end = words[word][1]
            start = min(position, end - 1)
            position += len(piece)
        offsets.append((start, min(max(position, start), end)))
    return offsets


class _SentencePiece(Tokenizer):
    model_type: ClassVar[str]
    lossless = True

    def __init__(self, model_proto: bytes) -> None:
        self._proto = model_proto
        self._processor = spm.SentencePieceProcessor(model_proto=model_proto)
        self._vocab = [
            self._processor.id_to_piece(i) for i in range(self._processor.get_piece_size())
        ]

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> _SentencePiece:
        if spec.vocab_size is None:
            raise TokstudyError(f"{cls.name}: a vocabulary size is required")
        spm.set_random_generator_seed(spec.seed)
        writer = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(**_trainer_options(cls.model_type, spec, corpus, writer))
        except RuntimeError as exc:
            reachable = _reachable_size(str(exc), spec.vocab_size)
            if reachable is None:
                raise TokstudyError(f"{cls.name} ({spec.label}): {exc}") from exc
            message = (
                f"{cls.name} ({spec.label}): vocabulary size {spec.vocab_size} cannot be "
                f"reached; the nearest reachable size is {reachable}"
            )
            if spec.size_policy != "adjust":
                raise VocabSizeError(message) from exc
            log.warning("%s; training with %d instead (size_policy: adjust)", message, reachable)
            adjusted = TrainSpec(
                reachable, spec.params, spec.seed, spec.threads, "error", spec.label
            )
            return cls.train(corpus, adjusted)
        return cls(writer.getvalue())

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        return self._processor.encode(list(lines), out_type=int)

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Ids with offsets placed by the pieces' word marks (:func:`metaspace_offsets`);
        a line whose pieces mark another number of words than it has (a normaliser that
        changed its spacing) falls back to decoded prefixes. The pieces' own byte offsets
        would need ``protobuf``, not a dependency."""
        encoded = []
        for line, ids in zip(lines, self.encode_batch(lines), strict=True):
            offsets = metaspace_offsets(line, [self._vocab[i] for i in ids])
            if offsets is None:
                prefixes = self._processor.decode([ids[:k] for k in range(len(ids))])
                offsets = prefix_offsets(line, prefixes)
            encoded.append(Encoded(ids, offsets))
        return encoded

    def decode(self, ids: Sequence[int]) -> str:
        return self._processor.decode(list(ids))

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        (Path(directory) / MODEL_FILE).write_bytes(self._proto)

    @classmethod
    def load(cls, directory: Path) -> _SentencePiece:
        return cls((Path(directory) / MODEL_FILE).read_bytes())

    def to_transformers(self) -> PreTrainedTokenizerBase:
        from transformers.tokenization_utils_sentencepiece import SentencePieceBackend

        with tempfile.TemporaryDirectory(prefix="tokstudy-spm-") as tmp:
            model_path = Path(tmp) / MODEL_FILE
            model_path.write_bytes(self._proto)
            return SentencePieceBackend(
                vocab_file=str(model_path), special_tokens_pattern="cls_sep", **SPECIAL_TOKEN_KWARGS
            )


class SentencePieceBPE(_SentencePiece):
    """SentencePiece with the BPE model."""

    name = "sp_bpe"
    model_type = "bpe"


class SentencePieceUnigram(_SentencePiece):
    """SentencePiece with the Unigram language model."""

    name = "sp_unigram"
    model_type = "unigram"
