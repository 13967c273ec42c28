"""Priorities of the cell jobs (rule ``train_tokenizer``; a ``train_tokenizer_sizes`` job
takes its cells' costs added): the longest first, so that the
long cells (SentencePiece Unigram at large sizes) do not start last and run alone at the
end of a study.

A cell's cost is the CPU seconds of its ``train`` and ``metrics`` phases in a cost table of
an earlier run (``tables/cost.csv``, :mod:`tokstudy.report.cost`): the study's own, or the
one its ``cell_costs`` key names. A cell the table does not have gets an estimate from its
tokenizer and size, in the same unit: the table's median cost of that tokenizer per
vocabulary item times the cell's size where the table has the tokenizer, else its
registry entry's ``cell_seconds`` for a cell of :data:`ESTIMATE_SIZE` items, scaled by
size (unsized tokenizers count as that size). Snakemake runs ready jobs in decreasing priority
(its greedy scheduler too); the priority is the cost in centiseconds.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import Cell
from tokstudy.tokenizers.registry import ADAPTERS

log = logging.getLogger(__name__)

#: the phases of a cell job whose CPU seconds make its cost
PHASES = ("train", "metrics")
#: the size the rough estimates below are for, and the size of an unsized tokenizer's cell
ESTIMATE_SIZE = 8000
DEFAULT_ESTIMATE = 5.0
#: a cost table's key of a cell: (language, tokenizer, size label)
CellKey = tuple[str, str, str]


@dataclass(frozen=True)
class CellCost:
    """A measured cell: the CPU seconds of its phases, and the items its per-item rate
    counts: its requested vocabulary size, :data:`ESTIMATE_SIZE` for a tokenizer whose data
    sets it, None when the cost table predates the ``vocab_size`` column."""

    seconds: float
    items: int | None


def read_cell_costs(path: Path) -> dict[CellKey, CellCost]:
    """(language, tokenizer, size) → the cost of the cell's train and metrics phases, from a
    cost table; a cell missing a phase or its CPU seconds is left out."""
    try:
        table = pd.read_csv(path, dtype={"size": str})
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise TokstudyError(f"cost table {path}: cannot be read ({exc})") from None
    needed = {"language", "tokenizer", "size", "step", "cpu_seconds"}
    if not needed <= set(table.columns):
        missing = ", ".join(sorted(needed - set(table.columns)))
        raise TokstudyError(f"cost table {path}: not a tokstudy cost table (no {missing})")
    known = "vocab_size" in table.columns
    if not known:
        log.info("cost table %s has no vocab_size column: no per-item estimates from it", path)
        table["vocab_size"] = pd.NA
    phases = table[table["step"].isin(PHASES)].dropna(subset=["cpu_seconds"])
    per_cell = phases.groupby(["language", "tokenizer", "size"]).agg(
        seconds=("cpu_seconds", "sum"),
        count=("cpu_seconds", "count"),
        vocab_size=("vocab_size", "first"),
    )
    complete = per_cell[per_cell["count"] == len(PHASES)]
    return {
        key: CellCost(
            float(row.seconds),
            None
            if not known
            else ESTIMATE_SIZE
            if pd.isna(row.vocab_size)
            else int(row.vocab_size),
        )
        for key, row in complete.iterrows()
    }


class CellPriorities:
    """The priority of each cell: its measured cost, else an estimate (module docstring)."""

    def __init__(self, costs: dict[CellKey, CellCost]) -> None:
        self.costs = costs
        per_item: dict[str, list[float]] = {}
        for (_, tokenizer, _), cost in costs.items():
            if cost.items is not None:
                per_item.setdefault(tokenizer, []).append(cost.seconds / cost.items)
        self.per_item = {
            name: float(pd.Series(values).median()) for name, values in per_item.items()
        }

    @classmethod
    def from_table(cls, path: Path | None) -> CellPriorities:
        """From the cost table at ``path``; estimates only when there is none."""
        if path is None or not Path(path).is_file():
            return cls({})
        costs = read_cell_costs(Path(path))
        log.info("cell priorities from %s: %d measured cells", path, len(costs))
        return cls(costs)

    def seconds(self, cell: Cell) -> float:
        """The cell's CPU seconds: measured, or estimated from tokenizer and size."""
        measured = self.costs.get((cell.language, cell.tokenizer, cell.size))
        if measured is not None:
            return measured.seconds
        items = cell.vocab_size or ESTIMATE_SIZE
        if cell.tokenizer in self.per_item:
            return self.per_item[cell.tokenizer] * items
        registered = ADAPTERS.get(cell.tokenizer)
        estimate = registered.cell_seconds if registered else DEFAULT_ESTIMATE
        return estimate * items / ESTIMATE_SIZE

    def priority(self, cell: Cell) -> int:
        """Snakemake priority of the cell's job: its cost in centiseconds."""
        return math.ceil(100 * self.seconds(cell))
