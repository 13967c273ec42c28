"""Checks of the HFT paper's claims (Signoroni & Rychlý, 2022) against a metrics table.

Per language, on the training split, comparing ``hft`` with ``sp_bpe`` and ``sp_unigram``:

- ν: hft's ν is higher than both baselines' at every size;
- F95%: the smallest size from which on hft's F95% is higher than both at every larger size
  (the paper: "above a size threshold");
- μ: at how many sizes hft's μ is lower than both (the paper: lower for most languages,
  except Japanese and Burmese).
"""

from __future__ import annotations

import pandas as pd

HFT = "hft"
BASELINES = ("sp_bpe", "sp_unigram")


def _by_size(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    rows = table[(table["metric"] == metric) & (table["split"] == "train")]
    return rows.pivot_table(index=["language", "vocab_size"], columns="tokenizer", values="value")


def claims_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per language: whether and where each claim holds."""
    nu, f95, mu = (_by_size(table, metric) for metric in ("nu", "f95", "mu"))
    rows = []
    for language in sorted(table["language"].unique()):
        nu_l, f95_l, mu_l = nu.loc[language], f95.loc[language], mu.loc[language]
        nu_higher = nu_l[HFT] > nu_l[list(BASELINES)].max(axis=1)
        f95_higher = (f95_l[HFT] > f95_l[list(BASELINES)].max(axis=1)).sort_index()
        threshold = None
        for size in reversed(f95_higher.index):
            if not f95_higher.loc[size]:
                break
            threshold = size
        mu_lower = mu_l[HFT] < mu_l[list(BASELINES)].min(axis=1)
        rows.append(
            {
                "language": language,
                "nu_higher_at_every_size": bool(nu_higher.all()),
                "nu_higher_sizes": f"{int(nu_higher.sum())}/{len(nu_higher)}",
                "f95_higher_from_size": int(threshold) if threshold is not None else None,
                "mu_lower_sizes": f"{int(mu_lower.sum())}/{len(mu_lower)}",
                "mu_lower_at_most_sizes": bool(mu_lower.sum() > len(mu_lower) / 2),
            }
        )
    return pd.DataFrame(rows)
