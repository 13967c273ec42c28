"""The cells of a study: (language, tokenizer, vocabulary size), and their size labels.

The study, its planners and the library (tables, plots, analyses) all name cells this way
without importing each other. It also holds :class:`ParityTokenizer`, the tokenizer of a
multi-parallel parity analysis, which the ``parity`` and ``udhr`` planners share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokstudy.tokenizers.registry import adapter_class, adapter_names

#: size label of a tokenizer whose data sets its vocabulary size (its full vocabulary)
FULL_SIZE_LABEL = "full"
#: size label of a pretrained tokenizer's cells (its vocabulary size is what it is)
PRETRAINED = "pretrained"
#: size label of the cost row of a job that trained every size of one language and
#: tokenizer (``train_sizes_together``)
ALL_SIZES_LABEL = "all"
#: the splits of a prepared corpus that every cell's metrics are computed on
CORPUS_SPLITS = ("train", "heldout")


def size_label(tokenizer: str, size: Any, kind: str = "trained") -> str:
    """The size label of a cell: :data:`PRETRAINED` for a pretrained tokenizer (``kind``),
    :data:`FULL_SIZE_LABEL` for a tokenizer whose data sets its size, else the size as a
    whole number. Names outside the tokenizer registry (CharacterBERT runs) keep their size.
    """
    if kind == PRETRAINED:
        return PRETRAINED
    data_sized = tokenizer in adapter_names() and not adapter_class(tokenizer).sized
    if data_sized or str(size) == FULL_SIZE_LABEL:
        return FULL_SIZE_LABEL
    return str(int(float(size)))


@dataclass(frozen=True)
class Cell:
    """One (language, tokenizer, vocabulary size) cell of the study."""

    language: str
    tokenizer: str
    size: str


@dataclass(frozen=True)
class ParityTokenizer:
    """A tokenizer of the multi-parallel parity analysis: ``directory`` serves ``languages``.

    ``label`` names the tokenizer in the tables; a tokenizer trained per language has one
    entry per language under one label (``sp_bpe 1000``), a multilingual one a single
    entry for all its languages. ``kind``: ``trained`` or ``multilingual``.
    """

    label: str
    kind: str
    directory: str
    languages: tuple[str, ...]
