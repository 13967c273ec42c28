"""Adapter names → implementations. The workflow knows names; this module knows classes.

Adapters are imported lazily so that naming one does not import every library.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer, one_line
from tokstudy.tokenizers.directory import META_FILE, VOCAB_FILE, read_meta

__all__ = [
    "ADAPTERS",
    "META_FILE",
    "VOCAB_FILE",
    "adapter_class",
    "adapter_names",
    "load_tokenizer",
]

#: name → "module:Class": the one list of tokenizer names (config/README.md documents each;
#: tests/test_tokenizer_layer.py checks that nothing else lists them)
ADAPTERS: dict[str, str] = {
    "sp_bpe": "tokstudy.tokenizers.sentencepiece_adapter:SentencePieceBPE",
    "sp_unigram": "tokstudy.tokenizers.sentencepiece_adapter:SentencePieceUnigram",
    "hf_bpe": "tokstudy.tokenizers.hf_adapter:HFBPE",
    "hf_wordpiece": "tokstudy.tokenizers.hf_adapter:HFWordPiece",
    "hf_unigram": "tokstudy.tokenizers.hf_adapter:HFUnigram",
    "char": "tokstudy.tokenizers.char_adapter:CharTokenizer",
    "wordmap_wordpiece": "tokstudy.tokenizers.wordmap.adapter:WordmapWordPiece",
    "bbpe": "tokstudy.tokenizers.bbpe:BBPE",
    "hf_bytelevel_bpe": "tokstudy.tokenizers.bytelevel_adapter:HFByteLevelBPE",
    "hft": "tokstudy.tokenizers.hft.adapter:HFT",
    "sp_bpe_hftpretok": "tokstudy.tokenizers.hft.pretok_sentencepiece:PretokenizedSentencePieceBPE",
    "sp_unigram_hftpretok": (
        "tokstudy.tokenizers.hft.pretok_sentencepiece:PretokenizedSentencePieceUnigram"
    ),
}


def adapter_names() -> list[str]:
    """All tokenizer names the workflow accepts, sorted."""
    return sorted(ADAPTERS)


def adapter_class(name: str) -> type[Tokenizer]:
    """The adapter class registered under ``name``."""
    if name not in ADAPTERS:
        raise TokstudyError(
            f"unknown tokenizer {name!r}; valid choices: {', '.join(adapter_names())}"
        )
    module_name, class_name = ADAPTERS[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def load_tokenizer(directory: Path) -> Tokenizer:
    """Load a tokenizer directory written by :func:`tokstudy.tokenizers.io.train_to_directory`.

    The checksums in ``meta.json`` are verified first; any failure is one
    :class:`TokstudyError` line naming the file.
    """
    directory = Path(directory)
    meta = read_meta(directory)
    if meta.get("kind") == "pretrained":
        from tokstudy.tokenizers.pretrained import load_pretrained_directory

        return load_pretrained_directory(directory)
    name = meta["tokenizer"]
    try:
        return adapter_class(name).load(directory)
    except TokstudyError:
        raise
    except Exception as exc:  # a library's own error on a damaged file
        detail = one_line(f"{type(exc).__name__}: {exc}")
        raise TokstudyError(f"{directory}: cannot load the {name} tokenizer ({detail})") from exc
