"""The cells of a study: (language, tokenizer, vocabulary size), and their size labels.

The study, its planners and the library (tables, plots, analyses) all name cells this way
without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tokstudy.errors import TokstudyError
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


def is_data_sized(tokenizer: str) -> bool:
    """Whether a registered adapter's data sets its size (``char``); a name outside the
    registry (a named variant, which is always of a sized algorithm; a CharacterBERT run)
    is sized."""
    return tokenizer in adapter_names() and not adapter_class(tokenizer).sized


def size_label(tokenizer: str, size: Any, kind: str = "trained") -> str:
    """The size label of a cell: :data:`PRETRAINED` for a pretrained tokenizer (``kind``),
    :data:`FULL_SIZE_LABEL` for a tokenizer whose data sets its size (or no size, None),
    else the size as a whole number. Names outside the tokenizer registry (named variants,
    CharacterBERT runs) keep their size.
    """
    if kind == PRETRAINED:
        return PRETRAINED
    if is_data_sized(tokenizer) or size is None or str(size) == FULL_SIZE_LABEL:
        return FULL_SIZE_LABEL
    return str(int(float(size)))


@dataclass(frozen=True)
class Cell:
    """One (language, tokenizer, vocabulary size) cell of the study: ``size`` is its label
    (the ``{size}`` of its paths), ``vocab_size`` the size asked for (None when the data sets
    it, and for a pretrained tokenizer). :func:`make_cell` decides the label, once; a job's
    wildcards find their cell (:func:`find_cell`), never a size from its label."""

    language: str
    tokenizer: str
    size: str
    vocab_size: int | None

    def wildcards(self) -> dict[str, str]:
        """The cell's values in path patterns: ``language``, ``tokenizer``, ``size``."""
        return {"language": self.language, "tokenizer": self.tokenizer, "size": self.size}


def make_cell(language: str, tokenizer: str, vocab_size: int | None, kind: str = "trained") -> Cell:
    """The cell of a tokenizer at a requested size (None: the data sets it), labelled by
    :func:`size_label`."""
    label = size_label(tokenizer, vocab_size, kind)
    requested = None if label in (FULL_SIZE_LABEL, PRETRAINED) else int(vocab_size)
    return Cell(language, tokenizer, label, requested)


def find_cell(cells: Iterable[Cell], language: str, tokenizer: str, size: str) -> Cell:
    """The cell of ``cells`` a job's wildcards name; one line when it is not planned."""
    for cell in cells:
        if (cell.language, cell.tokenizer, cell.size) == (language, tokenizer, str(size)):
            return cell
    raise TokstudyError(
        f"no cell {language}/{tokenizer}/{size} in the study: ask for the files it plans"
    )
