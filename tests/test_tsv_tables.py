"""The cell job's tables without pandas (:mod:`tokstudy.files.tsv`): byte for byte what
pandas' ``to_csv`` wrote before, the oracle, on any tokens and metric values."""

from __future__ import annotations

import io
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokstudy.files.tsv import TIDY_COLUMNS, tidy_records, write_tsv
from tokstudy.report.plots import training_frequencies

COUNT = st.integers(0, 2**40)
ROWS = st.lists(
    st.tuples(st.text(min_size=1, max_size=6), COUNT, COUNT),
    min_size=1,
    max_size=12,
    unique_by=lambda row: row[0],
)
VALUES = st.floats(allow_nan=True, allow_infinity=True)


def _written(header: list[str], rows: list[tuple]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.tsv"
        write_tsv(path, header, rows)
        return path.read_bytes().decode("utf-8")


@settings(max_examples=200, deadline=None)
@given(rows=ROWS)
@example(rows=[("a", 1, 2), ("\r", 3, 4), ('x\n"y', 5, 6), ("\t", 7, 8)])  # \r: no line end
def test_a_frequency_table_is_what_pandas_wrote(rows: list[tuple[str, int, int]]) -> None:
    tokens = [token for token, _, _ in rows]
    counts = {
        "train_frequency": np.array([row[1] for row in rows]),
        "heldout_frequency": np.array([row[2] for row in rows]),
    }
    frequencies = {"token": tokens, **counts}
    expected = io.StringIO()
    pd.DataFrame(frequencies).to_csv(expected, sep="\t", index_label="id")
    ids = range(len(tokens))
    text = _written(["id", *frequencies], [(i, *row) for i, row in zip(ids, rows, strict=True)])
    assert text == expected.getvalue()
    with tempfile.TemporaryDirectory() as folder:  # read back, whatever the tokens hold
        path = Path(folder) / "f.tsv"
        path.write_bytes(text.encode("utf-8"))
        assert training_frequencies(path).tolist() == counts["train_frequency"].tolist()


@settings(max_examples=200, deadline=None)
@given(
    metrics=st.dictionaries(st.sampled_from(["mu", "f95", "nu", "fertility"]), VALUES, min_size=1),
    size=st.integers(1, 10**6),
    language=st.text(min_size=1, max_size=4),
)
def test_tidy_rows_are_what_pandas_wrote(metrics: dict, size: int, language: str) -> None:
    records = tidy_records(language, "sp_bpe", size, "train", metrics)
    expected = io.StringIO()
    pd.DataFrame(records, columns=TIDY_COLUMNS).to_csv(expected, sep="\t", index=False)
    assert _written(TIDY_COLUMNS, records) == expected.getvalue()


def test_a_nan_is_an_empty_field_as_in_pandas() -> None:
    text = _written(["a", "b"], [(math.nan, 1.5)])
    assert text == "a\tb\n\t1.5\n"
