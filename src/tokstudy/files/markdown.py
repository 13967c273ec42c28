"""Markdown tables, as every table writer of the study renders them: numbers in ``.4g``,
a missing value as ``--`` (what the LaTeX tables print), ``(no rows)`` for an empty table.
"""

from __future__ import annotations

import pandas as pd

#: how a missing value reads, in Markdown as in LaTeX (``na_rep``)
MISSING = "--"


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".4g", missing: str = MISSING) -> str:
    """``frame`` as a Markdown table (no index); NaN reads ``missing`` (tabulate marks only
    ``None`` as missing: NaN would print ``nan``)."""
    if not len(frame):
        return "(no rows)"
    cells = frame.astype(object).where(frame.notna(), None)
    return cells.to_markdown(index=False, floatfmt=floatfmt, missingval=missing)
