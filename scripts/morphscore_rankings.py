"""How the tokenizers rank by MorphScore as published (words alone, raw score) and as the
study reports it (words in context, above chance): one study's ``morphscore.csv``.

    python scripts/morphscore_rankings.py <results>/tables/analysis/morphscore.csv \
        [--kind pretrained] [--min-items 100]

Prints two Markdown tables: per tokenizer, the means over its languages of the raw score
alone and in context, the chance level, the corrected score, precision and the score with
words kept whole counted 0, with its rank by the raw score alone and by the corrected
score in context; per language, the tokenizers in both orders, Spearman's ρ between them
and whether the first place changes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

#: the published ranking (raw score, words alone) and the study's (above chance, in context)
PUBLISHED = ("alone", "morphscore")
STUDY = ("in_context", "morphscore_corrected")
IN_CONTEXT = [
    "morphscore",
    "morphscore_chance",
    "morphscore_corrected",
    "precision",
    "morphscore_single_token_as_0",
]


def by_tokenizer(table: pd.DataFrame) -> pd.DataFrame:
    """One row per tokenizer: means over its languages, and its two ranks (1 = highest)."""
    alone = table[table["encoding"] == "alone"].groupby("tokenizer")["morphscore"].mean()
    context = table[table["encoding"] == "in_context"].groupby("tokenizer")[IN_CONTEXT].mean()
    frame = context.rename(columns={"morphscore": "morphscore_in_context"})
    frame.insert(0, "morphscore_alone", alone)
    frame.insert(0, "languages", table.groupby("tokenizer")["language"].nunique())
    frame["rank_published"] = frame["morphscore_alone"].rank(ascending=False, method="min")
    frame["rank_study"] = frame["morphscore_corrected"].rank(ascending=False, method="min")
    return frame.sort_values("rank_study").reset_index()


def by_language(table: pd.DataFrame) -> pd.DataFrame:
    """One row per language: the tokenizers by the published and by the study's score,
    Spearman's ρ between the two scores, and whether the first place changes."""
    rows = []
    for language, group in table.groupby("language", sort=True):
        scores = {}
        for encoding, column in (PUBLISHED, STUDY):
            part = group[group["encoding"] == encoding].set_index("tokenizer")[column]
            scores[column] = part.dropna().sort_values(ascending=False, kind="stable")
        published, study = scores[PUBLISHED[1]], scores[STUDY[1]]
        shared = published.index.intersection(study.index)
        if len(shared) < 2:
            continue
        rho = spearmanr(published[shared], study[shared]).statistic
        rows.append(
            {
                "language": language,
                "published_order": " > ".join(published.index),
                "study_order": " > ".join(study.index),
                "spearman": rho,
                "first_changes": published.index[0] != study.index[0],
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    """Read the table, keep one kind of tokenizer if asked, print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", type=Path, help="a study's tables/analysis/morphscore.csv")
    parser.add_argument("--kind", help="only tokenizers of this kind (pretrained, trained)")
    parser.add_argument(
        "--min-items", type=int, default=0, help="leave out languages with fewer items"
    )
    args = parser.parse_args()
    table = pd.read_csv(args.table)
    if args.kind:
        table = table[table["kind"] == args.kind]
    table = table[table["items"] >= args.min_items]
    print(by_tokenizer(table).to_markdown(index=False, floatfmt=".3f"))
    print()
    print(by_language(table).to_markdown(index=False, floatfmt=".2f"))


if __name__ == "__main__":
    main()
