"""The cell job's tab-separated tables, written without pandas (a cell job's process then
does not import it): the same bytes as pandas' ``DataFrame.to_csv(path, sep="\\t")``,
which writes through the same :mod:`csv` dialect (minimal quoting, ``\\n`` line ends)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: the columns of a tidy metric table (one row per metric of one cell and split)
TIDY_COLUMNS = ["language", "tokenizer", "vocab_size", "split", "metric", "value", "kind"]


def tidy_records(
    language: str,
    tokenizer: str,
    listed_size: int | str,
    split: str,
    metrics: dict[str, float],
    kind: str = "trained",
) -> list[tuple[Any, ...]]:
    """The metric values of one cell and split as rows of :data:`TIDY_COLUMNS`
    (``listed_size``: the ``vocab_size`` column's value, see
    :func:`tokstudy.workflow.cell_job.evaluate_tokenizer`)."""
    return [
        (language, tokenizer, listed_size, split, name, float(value), kind)
        for name, value in metrics.items()
    ]


def write_tsv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Write ``rows`` under ``header``, tab-separated, as pandas' ``to_csv`` would (a NaN
    as an empty field)."""
    with Path(path).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows([_field(value) for value in row] for row in rows)


def _field(value: Any) -> Any:
    return "" if isinstance(value, float) and math.isnan(value) else value
