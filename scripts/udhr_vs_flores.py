"""Print our UDHR premiums of one tokenizer beside those Petrov et al. (2023) published on
FLORES-200 (their repository github.com/AleksandarPetrov/tokenization-fairness, files
``assets/tokenization_lengths.csv`` and ``assets/flores_language_map.csv``):

    python scripts/udhr_vs_flores.py results/tables/analysis/parity_udhr.csv gpt_3_5 \
        tokenization_lengths.csv flores_language_map.csv [--column cl100k_base]

A summary (languages both cover, Spearman correlation, median ratio) then a Markdown table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

from tokstudy.analyses.udhr.parity import flores_comparison
from tokstudy.analyses.udhr.tables import read_udhr_table


def main() -> None:
    """Read both tables and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("udhr", type=Path, help="parity_udhr.csv")
    parser.add_argument("tokenizer", help="our label of the tokenizer (e.g. gpt_3_5)")
    parser.add_argument("lengths", type=Path, help="their tokenization_lengths.csv")
    parser.add_argument("language_map", type=Path, help="their flores_language_map.csv")
    parser.add_argument("--column", default="cl100k_base", help="their tokenizer column")
    args = parser.parse_args()
    udhr = read_udhr_table(args.udhr)
    table = flores_comparison(
        udhr[udhr["tokenizer"] == args.tokenizer],
        pd.read_csv(args.lengths),
        pd.read_csv(args.language_map, skipinitialspace=True),
        args.column,
    )
    rho = spearmanr(table["premium_udhr"], table["premium_flores"]).statistic
    print(
        f"{len(table)} languages; Spearman rho {rho:.3f}; median UDHR/FLORES "
        f"{table['udhr_over_flores'].median():.3f}\n"
    )
    print(table.to_markdown(index=False, floatfmt=".2f"))


if __name__ == "__main__":
    main()
