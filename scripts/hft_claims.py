"""Print, language by language, whether the HFT paper's claims hold in a metrics table.

python scripts/hft_claims.py results/hft2022/tables/metrics.csv [--output claims.md]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from tokstudy.report.hft_claims import claims_table


def main() -> None:
    """Read the tidy metrics table and print the claims table as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    markdown = claims_table(pd.read_csv(args.metrics)).to_markdown(index=False)
    if args.output:
        args.output.write_text(markdown + "\n", encoding="utf-8")
    print(markdown)


if __name__ == "__main__":
    main()
