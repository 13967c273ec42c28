"""Markdown tables read a missing value as ``--``, as the LaTeX tables do (never ``nan``)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from tokstudy.files.markdown import markdown_table
from tokstudy.report.tables import write_wide_tables


def test_a_missing_value_reads_as_in_latex() -> None:
    frame = pd.DataFrame({"name": ["a", "b"], "value": [1.23456, math.nan], "n": [3, 4]})
    lines = markdown_table(frame).splitlines()
    assert [cell.strip() for cell in lines[2].split("|")[1:4]] == ["a", "1.235", "3"]
    assert [cell.strip() for cell in lines[3].split("|")[1:4]] == ["b", "--", "4"]
    assert "nan" not in markdown_table(frame)
    assert markdown_table(frame.iloc[:0]) == "(no rows)"


def test_the_wide_metric_tables_print_dashes_for_a_missing_size(tmp_path: Path) -> None:
    # sp_bpe has a 500 cell, hf_bpe has not: its cell of that column is missing
    rows = [
        ("en", "sp_bpe", 500, "heldout", "fertility", 1.5, "trained"),
        ("en", "sp_bpe", 1000, "heldout", "fertility", 1.25, "trained"),
        ("en", "hf_bpe", 1000, "heldout", "fertility", 1.375, "trained"),
    ]
    columns = ["language", "tokenizer", "vocab_size", "split", "metric", "value", "kind"]
    table = pd.DataFrame(rows, columns=columns)
    markdown, latex = tmp_path / "m.md", tmp_path / "m.tex"
    write_wide_tables(table, ["fertility"], "heldout", markdown, latex)
    md = markdown.read_text(encoding="utf-8")
    hf_row = next(line for line in md.splitlines() if "hf_bpe" in line)
    assert [cell.strip() for cell in hf_row.strip("|").split("|")] == [
        "en", "trained", "hf_bpe", "--", "1.375",
    ]  # fmt: skip
    assert "nan" not in md
    tex = latex.read_text(encoding="utf-8")
    assert "hf\\_bpe & -- & 1.375" in tex
