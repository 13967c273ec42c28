"""Print the pretrained-vs-trained comparison of one metric as a Markdown table.

    python scripts/pretrained_headline.py results/llm_tokenizers/tables/metrics.csv \
        [--metric fertility] [--split heldout]

A results folder instead of ``metrics.csv`` reads the per-cell files under its
``metrics/`` (what a run that is still going, or was stopped, has finished).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from tokstudy.report.tables import collect, kind_comparison


def main() -> None:
    """Read a tidy metrics table and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--metric", default="fertility")
    parser.add_argument("--split", default="heldout")
    args = parser.parse_args()
    if args.metrics.is_dir():
        table = collect(sorted(args.metrics.glob("metrics/*/*/*.tsv")))
    else:
        table = pd.read_csv(args.metrics)
    frame = kind_comparison(table, args.metric, args.split)
    for column in frame.select_dtypes("number"):
        frame[column] = frame[column].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
    print(frame.to_markdown(index=False))


if __name__ == "__main__":
    main()
