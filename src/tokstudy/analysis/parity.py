"""Tokenization parity on line-aligned parallel text (Petrov et al., 2023).

The parity of a line pair is ``tokens(target line) / tokens(reference line)``, e.g.
Marathi over English: above 1 the target language pays more tokens for the same content.
A pair whose reference line has no tokens has no ratio (``NaN``) and is left out of the
summary statistics, which count such pairs as ``undefined``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tokstudy.corpus_io import batched
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

BATCH_LINES = 2048
DEFAULT_QUANTILES = (0.05, 0.25, 0.75, 0.95)


def _token_counts(tokenizer: Tokenizer, lines: Sequence[str]) -> list[int]:
    return [
        len(ids) for batch in batched(lines, BATCH_LINES) for ids in tokenizer.encode_batch(batch)
    ]


def tokenization_parity(
    reference_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    reference_lines: Sequence[str],
    target_lines: Sequence[str],
) -> pd.DataFrame:
    """Per line pair: token counts and ``target / reference`` ratio (line numbers from 1).

    The two tokenizers may be the same object (a multilingual tokenizer).
    """
    if len(reference_lines) != len(target_lines):
        raise TokstudyError(
            f"parallel text is not line-aligned: {len(reference_lines)} reference lines, "
            f"{len(target_lines)} target lines"
        )
    reference = np.array(_token_counts(reference_tokenizer, reference_lines), dtype=np.int64)
    target = np.array(_token_counts(target_tokenizer, target_lines), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(reference > 0, target / np.maximum(reference, 1), np.nan)
    return pd.DataFrame(
        {
            "line": np.arange(1, len(reference) + 1),
            "reference_tokens": reference,
            "target_tokens": target,
            "ratio": ratio,
        }
    )


def parity_summary(
    table: pd.DataFrame, quantiles: Sequence[float] = DEFAULT_QUANTILES
) -> pd.DataFrame:
    """Mean, median and quantiles of the per-line ratios (one row)."""
    ratios = table["ratio"].dropna()
    row: dict[str, float | int] = {
        "lines": len(table),
        "undefined": int(table["ratio"].isna().sum()),
        "mean": float(ratios.mean()) if len(ratios) else float("nan"),
        "median": float(ratios.median()) if len(ratios) else float("nan"),
    }
    for q in quantiles:
        row[f"q{round(q * 100):02d}"] = float(ratios.quantile(q)) if len(ratios) else float("nan")
    return pd.DataFrame([row])
