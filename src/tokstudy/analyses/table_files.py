"""The one writer of an analysis table: CSV and Markdown."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tokstudy.files.markdown import markdown_table
from tokstudy.files.write_errors import naming_write_failures


def write_table(table: pd.DataFrame, csv: Path, markdown: Path, title: str) -> None:
    """A table as CSV and as Markdown under a ``# title`` heading (``(no rows)`` when empty);
    a write the OS refuses is one line naming the file and the reason."""
    with naming_write_failures(csv, "the table"):
        table.to_csv(csv, index=False)
    body = markdown_table(table)
    with naming_write_failures(markdown, "the table"):
        Path(markdown).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
