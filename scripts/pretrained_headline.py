"""Print the pretrained-vs-trained comparison of one metric as a Markdown table.

    python scripts/pretrained_headline.py results/llm_tokenizers/tables/metrics.csv \
        [--metric fertility] [--split heldout]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from tokstudy.report.tables import kind_comparison


def main() -> None:
    """Read a tidy metrics table and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--metric", default="fertility")
    parser.add_argument("--split", default="heldout")
    args = parser.parse_args()
    frame = kind_comparison(pd.read_csv(args.metrics), args.metric, args.split)
    print(frame.to_markdown(index=False, floatfmt=".2f"))


if __name__ == "__main__":
    main()
