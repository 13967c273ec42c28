"""Adapter names → implementations. The workflow knows names; this module knows classes.

Adapters are imported lazily so that naming one does not import every library.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

#: name → "module:Class"; keep in sync with workflow/schemas/config.schema.yaml (tested)
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

META_FILE = "meta.json"
VOCAB_FILE = "vocab.tsv"


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
    """Load a tokenizer directory written by :func:`tokstudy.tokenizers.io.save_trained`."""
    meta_path = Path(directory) / META_FILE
    if not meta_path.is_file():
        raise TokstudyError(f"{directory}: not a tokstudy tokenizer directory (no {META_FILE})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("kind") == "pretrained":
        from tokstudy.tokenizers.pretrained import load_pretrained_directory

        return load_pretrained_directory(Path(directory))
    return adapter_class(meta["tokenizer"]).load(Path(directory))
