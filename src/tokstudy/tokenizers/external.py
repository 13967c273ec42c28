"""Tokenizers trained outside tokstudy, loaded for evaluation only (the metrics CLI)."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.hf_adapter import HFTokenizersAdapter
from tokstudy.tokenizers.registry import META_FILE, load_tokenizer
from tokstudy.tokenizers.sentencepiece_adapter import _SentencePiece


def _not_trainable(name: str) -> TokstudyError:
    return TokstudyError(f"{name}: a saved tokenizer is evaluated, not trained")


class SavedHFTokenizer(HFTokenizersAdapter):
    """Any HF ``tokenizer.json``."""

    name = "tokenizer.json"

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> Tokenizer:
        raise _not_trainable(cls.name)


class SavedSentencePiece(_SentencePiece):
    """Any SentencePiece ``.model`` file."""

    name = "sentencepiece"

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> Tokenizer:
        raise _not_trainable(cls.name)


def load_any(path: Path) -> Tokenizer:
    """A tokstudy tokenizer directory, an HF ``tokenizer.json`` or a SentencePiece ``.model``."""
    path = Path(path)
    if path.is_dir() and (path / META_FILE).is_file():
        return load_tokenizer(path)
    if path.is_dir() and (path / "tokenizer.json").is_file():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise TokstudyError(f"{path}: no such tokenizer file or directory")
    if path.suffix == ".json":
        try:
            return SavedHFTokenizer(HFTokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise TokstudyError(f"{path}: not a valid HF tokenizer.json ({exc})") from exc
    try:
        return SavedSentencePiece(path.read_bytes())
    except RuntimeError as exc:
        raise TokstudyError(f"{path}: not a SentencePiece model ({exc})") from exc
