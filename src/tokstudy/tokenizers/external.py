"""Tokenizers trained outside tokstudy, loaded for evaluation only (the metrics CLI)."""

from __future__ import annotations

from pathlib import Path

from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.pretrained import detect_format, load_source
from tokstudy.tokenizers.registry import META_FILE, load_tokenizer


def load_any(path: Path, fmt: str = "auto") -> Tokenizer:
    """A tokstudy tokenizer directory, or a pretrained tokenizer file (HF ``tokenizer.json``
    or a folder with one, SentencePiece ``.model``, tiktoken BPE file; see
    :mod:`tokstudy.tokenizers.pretrained`)."""
    path = Path(path)
    if path.is_dir() and (path / META_FILE).is_file():
        return load_tokenizer(path)
    detected, source = detect_format(path, fmt)
    return load_source(source, detected)
