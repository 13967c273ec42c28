"""The HFT-claims table on a hand-made metrics table."""

from __future__ import annotations

import pandas as pd

from tokstudy.report.hft_claims import claims_table


def _rows(language: str, metric: str, values: dict[str, list[float]]) -> list[dict]:
    return [
        {
            "language": language,
            "tokenizer": tok,
            "vocab_size": size,
            "split": "train",
            "metric": metric,
            "value": value,
        }
        for tok, series in values.items()
        for size, value in zip((500, 1000, 2000), series, strict=True)
    ]


def test_claims_per_language() -> None:
    rows = (
        _rows("xx", "nu", {"hft": [9, 8, 7], "sp_bpe": [5, 4, 3], "sp_unigram": [6, 5, 4]})
        + _rows("xx", "f95", {"hft": [1, 5, 6], "sp_bpe": [2, 3, 4], "sp_unigram": [2, 4, 5]})
        + _rows("xx", "mu", {"hft": [9, 8, 7], "sp_bpe": [10, 7, 8], "sp_unigram": [11, 9, 8]})
        + _rows("yy", "nu", {"hft": [9, 3, 7], "sp_bpe": [5, 4, 3], "sp_unigram": [6, 5, 4]})
        + _rows("yy", "f95", {"hft": [3, 5, 1], "sp_bpe": [2, 3, 4], "sp_unigram": [2, 4, 5]})
        + _rows("yy", "mu", {"hft": [12, 10, 9], "sp_bpe": [10, 7, 8], "sp_unigram": [11, 9, 8]})
    )
    table = claims_table(pd.DataFrame(rows)).set_index("language")
    assert (
        table.loc["xx", "nu_higher_at_every_size"] and table.loc["xx", "nu_higher_sizes"] == "3/3"
    )
    assert table.loc["xx", "f95_higher_from_size"] == 1000
    assert table.loc["xx", "mu_lower_sizes"] == "2/3" and table.loc["xx", "mu_lower_at_most_sizes"]
    assert (
        not table.loc["yy", "nu_higher_at_every_size"]
        and table.loc["yy", "nu_higher_sizes"] == "2/3"
    )
    assert pd.isna(table.loc["yy", "f95_higher_from_size"])
    assert table.loc["yy", "mu_lower_sizes"] == "0/3"
