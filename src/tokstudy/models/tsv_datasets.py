"""User-supplied sentence-classification datasets: tab-separated ``text`` / ``label`` files.

Format: UTF-8, one example per line, a header line naming at least the columns ``text``
and ``label`` (other columns are ignored), no quoting. Labels are arbitrary strings; the
labels of the training file are the classes, and a validation or test label outside
them is an error.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tokstudy.errors import TokstudyError
from tokstudy.files.write_errors import naming_write_failures

if TYPE_CHECKING:
    import pandas as pd

TSV_COLUMNS = ("text", "label")


def check_columns(path: Path, columns: Sequence[str]) -> None:
    """Fail with one line naming ``path`` unless its header ``columns`` hold text and label."""
    missing = [c for c in TSV_COLUMNS if c not in columns]
    if missing:
        raise TokstudyError(
            f"{path}: missing column(s) {', '.join(missing)} in the header "
            f"(found: {', '.join(map(str, columns))}); expected text<TAB>label"
        )


def check_header(path: Path) -> None:
    """Check the header line of a dataset file only (cheap: at workflow start)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            header = handle.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as err:
        raise TokstudyError(f"{path}: not a readable TSV file ({err})") from err
    check_columns(path, header.split("\t") if header else [])


def read_tsv_dataset(path: Path) -> list[tuple[str, str]]:
    """``(text, label)`` rows of a tab-separated file with a header naming both columns.

    Other columns are ignored; values are read verbatim (no quoting, no NA parsing).
    """
    import pandas as pd  # imported here: the study checks headers (above) at workflow start

    path = Path(path)
    if not path.is_file():
        raise TokstudyError(f"{path}: dataset file not found")
    try:
        frame = pd.read_csv(
            path, sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise TokstudyError(f"{path}: not a readable TSV file ({err})") from err
    check_columns(path, list(frame.columns))
    empty = frame.index[(frame["text"].str.strip() == "") | (frame["label"].str.strip() == "")]
    if len(empty):
        raise TokstudyError(f"{path}: empty text or label on data line {int(empty[0]) + 1}")
    return list(zip(frame["text"], frame["label"], strict=True))


def check_labels(known: Sequence[str], rows: Sequence[tuple[str, str]], where: str) -> None:
    """Fail if ``rows`` use a label outside ``known`` (the training labels)."""
    unknown = sorted({label for _, label in rows} - set(known))
    if unknown:
        raise TokstudyError(f"{where}: label(s) not in the training data: {', '.join(unknown)}")


def write_tsv(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as a tab-separated file with a header (its folder created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with naming_write_failures(path, "the table"):
        frame.to_csv(path, sep="\t", index=False)
