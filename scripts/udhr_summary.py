"""Print the docs' summaries of a UDHR parity table (docs/parity-udhr.md):

    python scripts/udhr_summary.py results/tables/analysis/parity_udhr.csv [--top 20] \
        [--languages arb ces deu ...]

the ``--top`` most expensive ISO 639-3 languages per tokenizer (a column each, varieties
averaged), then the fairness table over all languages and over ``--languages`` only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tokstudy.analyses.udhr.parity import most_expensive, udhr_fairness
from tokstudy.analyses.udhr.tables import read_udhr_table


def main() -> None:
    """Read a UDHR parity table and print the summaries as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("table", type=Path)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--languages", nargs="*", default=[])
    args = parser.parse_args()
    table = read_udhr_table(args.table)
    top = most_expensive(table, args.top)
    top["rank"] = top.groupby("tokenizer", sort=False).cumcount() + 1
    top["cell"] = [
        f"{code} {premium:.1f}"
        for code, premium in zip(top["iso6393"], top["premium"], strict=True)
    ]
    wide = top.pivot(index="rank", columns="tokenizer", values="cell")
    print(wide[list(dict.fromkeys(table["tokenizer"]))].to_markdown(), end="\n\n")
    print(udhr_fairness(table).to_markdown(index=False, floatfmt=".3f"), end="\n\n")
    if args.languages:
        subset = table[table["iso6393"].isin(args.languages)]
        print(udhr_fairness(subset).to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
