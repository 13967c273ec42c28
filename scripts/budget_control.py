"""The compute-matched control: do the causal-LM results of a study trained on equal bytes
hold when every model gets equal training FLOPs instead?

Reads two finished studies (``config/predictive.yaml`` and ``config/predictive_flops.yaml``)
and prints, for the scale and language they share:

* per cell (tokenizer, size): bits per byte under each budget, averaged over the seeds
  both trained, and the training tokens each budget gave;
* Kendall's τ between the two budgets' cell rankings, with a 95 % percentile bootstrap
  interval over cells and scipy's p-value;
* per intrinsic metric, the within-size partial Spearman ρ with bits per byte (interval,
  Holm-adjusted p) in each study's own correlation table, for that language's scope.

    python scripts/budget_control.py results/predictive results/predictive_flops \
        --language en --scale tiny
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from tokstudy.statistics.bootstrap import bootstrap_interval

CLM_TABLE = "tables/models/clm.tsv"
CORRELATION_TABLE = "tables/analysis/correlation.csv"
CELL = ["tokenizer", "vocab_size"]


def _kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.kendalltau(x, y).statistic)


def paired_cells(studies: dict[str, Path], language: str, scale: str) -> pd.DataFrame:
    """Per cell, each budget's bits per byte and training tokens over the shared seeds."""
    tables = {}
    for budget, folder in studies.items():
        table = pd.read_csv(folder / CLM_TABLE, sep="\t", dtype={"vocab_size": str})
        rows = table[(table["language"] == language) & (table["scale"] == scale)]
        if rows.empty:
            raise SystemExit(f"{folder / CLM_TABLE}: no {scale} rows for language {language}")
        tables[budget] = rows
    seeds = set.intersection(*(set(rows["seed"]) for rows in tables.values()))
    columns = {}
    for budget, rows in tables.items():
        shared = rows[rows["seed"].isin(seeds)].groupby(CELL)
        columns[f"bpb_{budget}"] = shared["bits_per_byte"].mean()
        columns[f"tokens_{budget}"] = shared["train_tokens"].mean()
    frame = pd.DataFrame(columns).dropna().sort_index()
    frame.attrs["seeds"] = sorted(seeds)
    return frame


def within_size(studies: dict[str, Path], language: str, scale: str) -> pd.DataFrame:
    """Each metric's within-size partial ρ with bits per byte in each study's own table."""
    score = f"clm_bits_per_byte_{scale}"
    frames = []
    for budget, folder in studies.items():
        table = pd.read_csv(folder / CORRELATION_TABLE)
        rows = table[(table["score"] == score) & (table["scope"] == language)]
        frames.append(
            rows.set_index("intrinsic")[
                ["partial_spearman", "partial_low", "partial_high", "p_adjusted"]
            ].add_suffix(f"_{budget}")
        )
    return pd.concat(frames, axis=1).sort_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bytes_study", type=Path)
    parser.add_argument("flops_study", type=Path)
    parser.add_argument("--language", default="en")
    parser.add_argument("--scale", default="tiny")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    studies = {"bytes": args.bytes_study, "flops": args.flops_study}
    cells = paired_cells(studies, args.language, args.scale)
    print(f"{args.language}, {args.scale}, seeds {cells.attrs['seeds']}, {len(cells)} cells")
    print(cells.to_string(float_format=lambda v: f"{v:.4g}"))
    a, b = cells["bpb_bytes"].to_numpy(), cells["bpb_flops"].to_numpy()
    tau = bootstrap_interval(
        (a, b),
        _kendall_tau,
        vectorized=False,
        n_resamples=args.resamples,
        confidence=0.95,
        seed=0,
    )
    test = stats.kendalltau(a, b)
    print(
        f"\nKendall tau between the budgets' rankings: {test.statistic:.2f} "
        f"[{tau.low:.2f}, {tau.high:.2f}], p {test.pvalue:.2g}"
    )
    print(f"mean bits per byte: bytes {a.mean():.4f}, flops {b.mean():.4f}")
    print("\nwithin-size partial Spearman with bits per byte (Holm-adjusted p):")
    print(within_size(studies, args.language, args.scale).to_string(float_format="{:.2f}".format))


if __name__ == "__main__":
    main()
