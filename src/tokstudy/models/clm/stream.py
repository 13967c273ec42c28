"""Text as a token stream: each line's tokens followed by the tokenizer's ``[SEP]`` (the
line's newline); the scored stream starts with one ``[SEP]`` (:mod:`tokstudy.models.clm`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError


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


def text_bytes(lines: Sequence[str]) -> int:
    """UTF-8 bytes of the lines, each followed by a newline (the scored text)."""
    return int(line_bytes(lines).sum())
