"""The cells of a study: (language, tokenizer, vocabulary size), and their size labels.

A neutral module: the study, its planners and the library (tables, plots, analyses) all
name cells this way without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

#: size label of a tokenizer whose data sets its vocabulary size
UNSIZED = "full"
#: size label of a pretrained tokenizer's cells (its vocabulary size is what it is)
PRETRAINED = "pretrained"
#: the splits of a prepared corpus that every cell's metrics are computed on
CORPUS_SPLITS = ("train", "heldout")


@dataclass(frozen=True)
class Job:
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
