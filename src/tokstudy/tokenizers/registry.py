"""Adapter names and pretrained formats → implementations. The workflow knows names; this
module knows classes.

Adapters are imported lazily so that naming one does not import every library.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError, one_line
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.directory import META_FILE, VOCAB_FILE, read_meta

__all__ = [
    "ADAPTERS",
    "ESTIMATED_CELL_SECONDS",
    "FAMILIES",
    "META_FILE",
    "PRETRAINED_FORMATS",
    "VOCAB_FILE",
    "adapter_class",
    "adapter_names",
    "directory_class",
    "family_of",
    "format_class",
    "load_tokenizer",
]

#: name → "module:Class": the one list of tokenizer names (config/README.md documents each;
#: tests/test_tokenizer_layer.py checks that nothing else lists them)
ADAPTERS: dict[str, str] = {
    "sp_bpe": "tokstudy.tokenizers.adapters.sentencepiece:SentencePieceBPE",
    "sp_unigram": "tokstudy.tokenizers.adapters.sentencepiece:SentencePieceUnigram",
    "hf_bpe": "tokstudy.tokenizers.adapters.hf_tokenizers:HFBPE",
    "hf_wordpiece": "tokstudy.tokenizers.adapters.hf_tokenizers:HFWordPiece",
    "hf_unigram": "tokstudy.tokenizers.adapters.hf_tokenizers:HFUnigram",
    "char": "tokstudy.tokenizers.adapters.char:CharTokenizer",
    "wordmap_wordpiece": "tokstudy.tokenizers.adapters.wordmap:WordmapWordPiece",
    "bbpe": "tokstudy.tokenizers.adapters.bbpe:BBPE",
    "hf_bytelevel_bpe": "tokstudy.tokenizers.adapters.bytelevel:HFByteLevelBPE",
    "hft": "tokstudy.tokenizers.adapters.hft:HFT",
    "sp_bpe_hftpretok": "tokstudy.tokenizers.adapters.hft_pretok:PretokenizedSentencePieceBPE",
    "sp_unigram_hftpretok": (
        "tokstudy.tokenizers.adapters.hft_pretok:PretokenizedSentencePieceUnigram"
    ),
    # the tokenizers the field compares now (after the first twelve, so their colours stay)
    "bpe_dropout": "tokstudy.tokenizers.adapters.dropout:BPEDropout",
    "superbpe": "tokstudy.tokenizers.adapters.superbpe:SuperBPE",
    "morfessor": "tokstudy.tokenizers.adapters.morfessor:Morfessor",
    "parity_bpe": "tokstudy.tokenizers.adapters.parity_bpe:ParityBPE",
    "bpe_knockout": "tokstudy.tokenizers.adapters.knockout:BPEKnockout",
    "unigram_sampling": "tokstudy.tokenizers.adapters.sampling:SampledUnigram",
}

#: name → the family of algorithms it belongs to: the correlation analysis separates a
#: metric's association within a family from the one across families
FAMILIES: dict[str, str] = {
    "sp_bpe": "bpe",
    "hf_bpe": "bpe",
    "sp_bpe_hftpretok": "bpe",
    "bpe_dropout": "bpe",
    "superbpe": "bpe",
    "parity_bpe": "bpe",
    "bpe_knockout": "bpe",
    "sp_unigram": "unigram",
    "hf_unigram": "unigram",
    "sp_unigram_hftpretok": "unigram",
    "unigram_sampling": "unigram",
    "hf_wordpiece": "wordpiece",
    "wordmap_wordpiece": "wordpiece",
    "bbpe": "byte_level_bpe",
    "hf_bytelevel_bpe": "byte_level_bpe",
    "hft": "hft",
    "morfessor": "morphological",
    "char": "char",
}

#: rough CPU seconds of one cell (training and metrics) at 8,000 items on an HFT-2022
#: corpus, per tokenizer: the cell jobs' priorities when no cost table has the tokenizer
#: (tokstudy.workflow.cell_priority); only their order matters
ESTIMATED_CELL_SECONDS: dict[str, float] = {
    "morfessor": 90.0,  # pure Python: 14 s on 3,000 English lines at size 400
    "bpe_knockout": 90.0,  # a Morfessor model of the word types, then BPE
    "sp_unigram": 30.0,
    "sp_unigram_hftpretok": 30.0,
    "unigram_sampling": 30.0,
    "hft": 15.0,
    "sp_bpe": 10.0,
    "sp_bpe_hftpretok": 10.0,
    "wordmap_wordpiece": 10.0,
    "bbpe": 8.0,
    "superbpe": 8.0,
    "hf_unigram": 6.0,
    "hf_bpe": 4.0,
    "bpe_dropout": 4.0,
    "parity_bpe": 4.0,
    "hf_wordpiece": 4.0,
    "hf_bytelevel_bpe": 4.0,
    "char": 1.0,
}


#: pretrained source format → "module:Class" (a :class:`tokstudy.tokenizers.pretrained.Pretrained`),
#: in the order :func:`~tokstudy.tokenizers.pretrained.detect_format` tries them; the one
#: list of formats (tests/test_pretrained.py checks the schema's ``format`` enum against it)
PRETRAINED_FORMATS: dict[str, str] = {
    "tokenizer_json": "tokstudy.tokenizers.pretrained:PretrainedHF",
    "sentencepiece": "tokstudy.tokenizers.pretrained:PretrainedSentencePiece",
    "tiktoken": "tokstudy.tokenizers.pretrained:PretrainedTiktoken",
}


def _imported(location: str) -> type[Tokenizer]:
    module_name, class_name = location.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def adapter_names() -> list[str]:
    """All tokenizer names the workflow accepts, sorted."""
    return sorted(ADAPTERS)


def family_of(name: str) -> str:
    """The family of the tokenizer registered under ``name`` (:data:`FAMILIES`); a name
    the registry does not know (a pretrained tokenizer) is its own family."""
    return FAMILIES.get(name, name)


def adapter_class(name: str) -> type[Tokenizer]:
    """The adapter class registered under ``name``."""
    if name not in ADAPTERS:
        raise TokstudyError(
            f"unknown tokenizer {name!r}; valid choices: {', '.join(adapter_names())}"
        )
    return _imported(ADAPTERS[name])


def format_class(fmt: str) -> type[Tokenizer]:
    """The class of a pretrained source format registered under ``fmt`` (a
    :class:`~tokstudy.tokenizers.pretrained.Pretrained`)."""
    if fmt not in PRETRAINED_FORMATS:
        raise TokstudyError(
            f"unknown pretrained format {fmt!r}; valid choices: {', '.join(PRETRAINED_FORMATS)}"
        )
    return _imported(PRETRAINED_FORMATS[fmt])


def directory_class(meta: dict[str, Any]) -> type[Tokenizer]:
    """The class that loads a tokenizer directory, from its ``meta.json``: a pretrained
    tokenizer's names its source ``format``, a trained one's its adapter (``algorithm``
    for a named variant, else ``tokenizer``)."""
    if "format" in meta:
        return format_class(meta["format"])
    return adapter_class(meta.get("algorithm", meta["tokenizer"]))


def load_tokenizer(directory: Path) -> Tokenizer:
    """Load a tokenizer directory: one written by
    :func:`tokstudy.tokenizers.build.train_to_directory` or
    :func:`tokstudy.tokenizers.pretrained.import_pretrained`.

    The checksums in ``meta.json`` are verified first; any failure is one
    :class:`TokstudyError` line naming the file.
    """
    directory = Path(directory)
    meta = read_meta(directory)
    name = meta["tokenizer"]
    try:
        return directory_class(meta).load(directory)
    except TokstudyError:
        raise
    except Exception as exc:  # a library's own error on a damaged file
        detail = one_line(exc)
        raise TokstudyError(f"{directory}: cannot load the {name} tokenizer ({detail})") from exc
