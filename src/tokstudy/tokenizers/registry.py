"""Adapter names and pretrained formats → implementations. The workflow knows names; this
module knows classes.

Adapters are imported lazily so that naming one does not import every library.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError, one_line
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.directory import META_FILE, VOCAB_FILE, read_meta

__all__ = [
    "ADAPTERS",
    "META_FILE",
    "PRETRAINED_FORMATS",
    "VOCAB_FILE",
    "Registered",
    "adapter_class",
    "adapter_names",
    "directory_class",
    "family_of",
    "format_class",
    "load_tokenizer",
]


@dataclass(frozen=True)
class Registered:
    """What belongs to one registered tokenizer: where its adapter class is
    (``"module:Class"``, imported when the tokenizer is used, so that naming one does not
    import every library), its ``family`` of algorithms (the correlation analysis
    separates a metric's association within a family from the one across families), the
    rough CPU seconds of one of its cells (training and metrics) at 8,000 items on an
    HFT-2022 corpus (the cell jobs' priorities when no cost table has it:
    :mod:`tokstudy.workflow.cell_priority`; only their order matters), and its
    ``colour`` in every plot and on the study page. Its parameters are its class's
    ``params_spec``."""

    location: str
    family: str
    cell_seconds: float
    colour: str


#: name → what belongs to it: the one list of tokenizer names (config/README.md documents
#: each; tests/test_tokenizer_layer.py checks that nothing else lists them)
ADAPTERS: dict[str, Registered] = {
    "sp_bpe": Registered(
        location="tokstudy.tokenizers.adapters.sentencepiece:SentencePieceBPE",
        family="bpe",
        cell_seconds=10.0,
        colour="#1f77b4",
    ),
    "sp_unigram": Registered(
        location="tokstudy.tokenizers.adapters.sentencepiece:SentencePieceUnigram",
        family="unigram",
        cell_seconds=30.0,
        colour="#ff7f0e",
    ),
    "hf_bpe": Registered(
        location="tokstudy.tokenizers.adapters.hf_tokenizers:HFBPE",
        family="bpe",
        cell_seconds=4.0,
        colour="#2ca02c",
    ),
    "hf_wordpiece": Registered(
        location="tokstudy.tokenizers.adapters.hf_tokenizers:HFWordPiece",
        family="wordpiece",
        cell_seconds=4.0,
        colour="#d62728",
    ),
    "hf_unigram": Registered(
        location="tokstudy.tokenizers.adapters.hf_tokenizers:HFUnigram",
        family="unigram",
        cell_seconds=6.0,
        colour="#9467bd",
    ),
    "char": Registered(
        location="tokstudy.tokenizers.adapters.char:CharTokenizer",
        family="char",
        cell_seconds=1.0,
        colour="#8c564b",
    ),
    "wordmap_wordpiece": Registered(
        location="tokstudy.tokenizers.adapters.wordmap:WordmapWordPiece",
        family="wordpiece",
        cell_seconds=10.0,
        colour="#e377c2",
    ),
    "bbpe": Registered(
        location="tokstudy.tokenizers.adapters.bbpe:BBPE",
        family="byte_level_bpe",
        cell_seconds=8.0,
        colour="#7f7f7f",
    ),
    "hf_bytelevel_bpe": Registered(
        location="tokstudy.tokenizers.adapters.bytelevel:HFByteLevelBPE",
        family="byte_level_bpe",
        cell_seconds=4.0,
        colour="#bcbd22",
    ),
    "hft": Registered(
        location="tokstudy.tokenizers.adapters.hft:HFT",
        family="hft",
        cell_seconds=15.0,
        colour="#17becf",
    ),
    "sp_bpe_hftpretok": Registered(
        location="tokstudy.tokenizers.adapters.hft_pretok:PretokenizedSentencePieceBPE",
        family="bpe",
        cell_seconds=10.0,
        colour="#393b79",
    ),
    "sp_unigram_hftpretok": Registered(
        location="tokstudy.tokenizers.adapters.hft_pretok:PretokenizedSentencePieceUnigram",
        family="unigram",
        cell_seconds=30.0,
        colour="#637939",
    ),
    "bpe_dropout": Registered(
        location="tokstudy.tokenizers.adapters.dropout:BPEDropout",
        family="bpe",
        cell_seconds=4.0,
        colour="#8c6d31",
    ),
    "superbpe": Registered(
        location="tokstudy.tokenizers.adapters.superbpe:SuperBPE",
        family="bpe",
        cell_seconds=8.0,
        colour="#843c39",
    ),
    "morfessor": Registered(
        location="tokstudy.tokenizers.adapters.morfessor:Morfessor",
        family="morphological",
        cell_seconds=90.0,  # pure Python: 14 s on 3,000 English lines at size 400
        colour="#7b4173",
    ),
    "parity_bpe": Registered(
        location="tokstudy.tokenizers.adapters.parity_bpe:ParityBPE",
        family="bpe",
        cell_seconds=4.0,
        colour="#3182bd",
    ),
    "bpe_knockout": Registered(
        location="tokstudy.tokenizers.adapters.knockout:BPEKnockout",
        family="bpe",
        cell_seconds=90.0,  # a Morfessor model of the word types, then BPE
        colour="#e6550d",
    ),
    "unigram_sampling": Registered(
        location="tokstudy.tokenizers.adapters.sampling:SampledUnigram",
        family="unigram",
        cell_seconds=30.0,
        colour="#31a354",
    ),
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
    """The family of the tokenizer registered under ``name``; a name the registry does not
    know (a pretrained tokenizer) is its own family."""
    return ADAPTERS[name].family if name in ADAPTERS else name


def adapter_class(name: str) -> type[Tokenizer]:
    """The adapter class registered under ``name``."""
    if name not in ADAPTERS:
        raise TokstudyError(
            f"unknown tokenizer {name!r}; valid choices: {', '.join(adapter_names())}"
        )
    return _imported(ADAPTERS[name].location)


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
