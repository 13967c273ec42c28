"""The correlation, ranking and mixed-model tables as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from tokstudy.analyses.correlation.settings import OTHER_FLAGGED_RUN_POLICY, CorrelationSettings
from tokstudy.analyses.correlation.table import FLOOR_PERMUTATIONS, POOLED, SIGNIFICANCE

POOLED_WARNING = (
    "Rows with scope `pooled` combine every language (or translation direction): a "
    "tokenizer is one unit over all of them, ranked within each size and language. Read "
    "the per-language rows first."
)
UNIT_NOTE = (
    "The unit of inference is the tokenizer: a tokenizer at several sizes (and languages) "
    "is one observation. `units`: the tokenizers a permutation or resample can exchange "
    "(those sharing their sizes, languages and, within families, family with another)."
)


def _interval(value: float, low: float, high: float) -> str:
    if pd.isna(value):
        return "–"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _p(value: float) -> str:
    if pd.isna(value):
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _floor(value: float) -> str:
    """The design's smallest p, shown only where it is above the significance level."""
    return f"{value:.3f}" if not pd.isna(value) and value > SIGNIFICANCE else ""


def _notes(scores: Sequence[str], notes: dict[str, str]) -> list[str]:
    shown = sorted({(s, notes[s]) for s in scores if notes.get(s)})
    return [f"- **{score}**: {note}" for score, note in shown]


def _intrinsic_names(rows: pd.DataFrame) -> list[str]:
    """The metric names, the primary one (declared before the run) marked."""
    primary = rows["primary"] if "primary" in rows else [False] * len(rows)
    return [
        f"**{name}** (primary)" if first else name
        for name, first in zip(rows["intrinsic"], primary, strict=True)
    ]


def _header(title: str, explanation: str, table: pd.DataFrame) -> list[str]:
    """The opening of the correlation and ranking documents: title, what the columns are,
    the warning on pooled rows and the notes on the table's scores."""
    lines = [f"# {title}", "", explanation, "", UNIT_NOTE, "", f"**{POOLED_WARNING}**", ""]
    notes = (
        dict(zip(table["score"], table["score_note"].fillna(""), strict=True)) if len(table) else {}
    )
    if any(notes.values()):
        lines += ["Notes on scores:", "", *_notes(list(notes), notes), ""]
    return lines


def _test_columns(rows: pd.DataFrame) -> dict[str, Any]:
    """The columns of the size-controlled test every document shows: ρ within size with
    its interval (the statistic tested), the within-size p, Holm's p and the design's
    floor."""
    return {
        "units": rows["units"],
        "ρ within size [CI]": [
            _interval(*v)
            for v in rows[["partial_spearman", "partial_low", "partial_high"]].to_numpy()
        ],
        "p within size": rows["p_within_size"].map(_p),
        "p (Holm)": rows["p_adjusted"].map(_p),
        "floor": rows["min_attainable_p"].map(_floor),
    }


def correlation_markdown(table: pd.DataFrame, settings: CorrelationSettings) -> str:
    """The correlation table: one section per score, its size baseline in the heading."""
    lines = _header(
        "Intrinsic metrics against downstream scores, vocabulary size controlled",
        f"Per score and scope: ρ(log size, score) as the baseline; Spearman ρ over the cells "
        f"and Spearman ρ within size (tokenizers ranked within each vocabulary size, and "
        f"language pooled: the statistic tested), each with a {settings.confidence:.0%} "
        f"bootstrap interval ({settings.bootstrap_samples} resamples of tokenizers, each "
        f"with all its cells, then of seeds within each cell); a two-sided permutation p "
        f"that permutes tokenizer labels, one permutation in every size and language "
        f"(exact when there are at most {settings.permutations} orderings, else "
        f"{settings.permutations} random ones; where none of those is as extreme as the "
        f"data, {FLOOR_PERMUTATIONS:,} random ones, and where none of those either, their "
        f"floor, noted); "
        f"p(Holm) adjusts over the metrics tested for the score in the scope"
        + (
            f", except the primary metric `{settings.primary}`, declared before the run: "
            "listed first and adjusted alone"
            if settings.primary
            else ""
        )
        + f". `floor` is the "
        f"smallest p the design can reach, shown where it is above {SIGNIFICANCE}: no "
        f"metric can be significant there, whatever the data, and no p is given.",
        table,
    )
    for (score, scope), rows in table.groupby(["score", "scope"], sort=True):
        first = rows.iloc[0]
        size = _interval(first["size_spearman"], first["size_low"], first["size_high"])
        shown = pd.DataFrame(
            {
                "intrinsic": _intrinsic_names(rows),
                "n": rows["n"],
                "seeds": rows["seeds"],
                "ρ [CI]": [
                    _interval(*v)
                    for v in rows[["spearman", "spearman_low", "spearman_high"]].to_numpy()
                ],
                **_test_columns(rows),
                "note": rows["note"].fillna(""),
            }
        )
        heading = f"## {score} ({'**pooled**' if scope == POOLED else scope})"
        lines += [heading, "", f"ρ(log vocabulary size, score) = {size}", ""]
        lines += [shown.to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)


def ranking_markdown(ranked: pd.DataFrame) -> str:
    """The ranking: per score and scope, by Holm-adjusted p; ``=`` marks a tie."""
    lines = _header(
        "Intrinsic metrics ranked per downstream score",
        "By Holm-adjusted within-size p (ascending), then |ρ within size|; `=` marks a metric "
        "whose interval of ρ within size overlaps the one ranked just above (a tie: they "
        "share the rank).",
        ranked,
    )
    if ranked.empty:
        return "\n".join([*lines, "No metric could be tested (see correlation.md).", ""])
    shown = pd.DataFrame(
        {
            "score": ranked["score"],
            "scope": [f"**{s}**" if s == POOLED else s for s in ranked["scope"]],
            "rank": [
                f"={r}" if t else str(r)
                for r, t in zip(ranked["rank"], ranked["tied"], strict=True)
            ],
            "intrinsic": _intrinsic_names(ranked),
            "n": ranked["n"],
            **_test_columns(ranked),
        }
    )
    return "\n".join([*lines, shown.to_markdown(index=False, disable_numparse=True), ""])


def mixed_markdown(mixed: pd.DataFrame, settings: CorrelationSettings) -> str:
    """The mixed-model table, or why there is none (a single scope, no families)."""
    lines = [
        "# Mixed models: score ~ metric + log(size) + (1 | tokenizer) + (1 | family)",
        "",
        f"statsmodels MixedLM (REML) over cell means, every variable z-scored: the coefficient "
        f"is in standard deviations of the score per standard deviation of the metric, with "
        f"its {settings.confidence:.0%} Wald interval. Crossed random intercepts per "
        f"tokenizer and (with families) per family, so a tokenizer's lasting level counts "
        f"once, not once per cell; pooled over languages, the language as fixed indicators. "
        f"`groups`: the tokenizers.",
        "",
    ]
    if mixed.empty:
        return "\n".join([*lines, "No score could be modelled.", ""])
    shown = mixed.assign(
        coefficient=[
            _interval(*v) for v in mixed[["coefficient", "low", "high"]].to_numpy(dtype=float)
        ],
        p=mixed["p"].map(_p),
        note=mixed["note"].fillna(""),
    ).rename(columns={"coefficient": "β [CI]"})
    columns = ["score", "intrinsic", "scope", "random_effect", "n", "groups", "β [CI]", "p"]
    table = shown[[*columns, "note"]]
    return "\n".join([*lines, table.to_markdown(index=False, disable_numparse=True), ""])


def family_markdown(family: pd.DataFrame, settings: CorrelationSettings) -> str:
    """The within- and across-family table, or why there is none (no families)."""
    lines = _header(
        "Intrinsic metrics within and across tokenizer families",
        "`within_family`: tokenizers of one family compared with each other: tokenizers are "
        "ranked within size, language and family, permuted and resampled only within their "
        "family, so a metric that only tells families apart finds nothing here (families of "
        "fewer than 3 tokenizers are left out, noted). `across_family`: each family's mean "
        "cell (its tokenizers' metrics and scores averaged per seed) compared across "
        "families, within size and language, families the units. Intervals, tests and "
        f"Holm's adjustment as in correlation.md ({settings.bootstrap_samples} resamples, up "
        f"to {settings.permutations} orderings).",
        family,
    )
    if family.empty:
        return "\n".join([*lines, "The cells table has no `family` column.", ""])
    for (score, scope, level), rows in family.groupby(["score", "scope", "level"], sort=True):
        shown = pd.DataFrame(
            {
                "intrinsic": _intrinsic_names(rows),
                "n": rows["n"],
                **_test_columns(rows),
                "note": rows["note"].fillna(""),
            }
        )
        heading = f"## {score} ({'**pooled**' if scope == POOLED else scope}), {level}"
        lines += [heading, "", shown.to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)


def comparison_markdown(comparison: pd.DataFrame, settings: CorrelationSettings) -> str:
    """The primary metric against each other one, or why there is none (no primary)."""
    lines = [
        "# Is the primary metric the better predictor?",
        "",
        f"Per score, scope and level: the primary metric's ρ within size against each other "
        f"metric's, each oriented by the sign of its own estimate, so `difference` is how "
        f"much stronger the primary's association is (|ρ primary| − |ρ other|). "
        f"{settings.confidence:.0%} interval from {settings.bootstrap_samples} resamples of "
        f"tokenizers (the same resamples for both metrics); `p`: two-sided bootstrap p that "
        f"the difference is 0, Holm-adjusted over the other metrics (`p (Holm)`). {UNIT_NOTE}",
        "",
    ]
    if comparison.empty:
        return "\n".join(
            [*lines, "No primary metric was declared (analyses.correlation.primary).", ""]
        )
    for (score, scope, level), rows in comparison.groupby(["score", "scope", "level"], sort=True):
        shown = pd.DataFrame(
            {
                "other": rows["other"],
                "n": rows["n"],
                "units": rows["units"],
                "ρ primary": rows["primary_rho"].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}"),
                "ρ other": rows["other_rho"].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}"),
                "difference [CI]": [
                    _interval(*v) for v in rows[["difference", "low", "high"]].to_numpy(dtype=float)
                ],
                "p": rows["p"].map(_p),
                "p (Holm)": rows["p_adjusted"].map(_p),
                "note": rows["note"].fillna(""),
            }
        )
        primary = rows["primary"].iloc[0]
        heading = f"## {score} ({'**pooled**' if scope == POOLED else scope}), {level}: `{primary}`"
        lines += [heading, "", shown.to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)


def sensitivity_markdown(table: pd.DataFrame, policy: str, same: bool) -> str:
    """Each verdict as run and under the other policy for flagged runs, and whether it
    holds there."""
    lines = [
        "# Sensitivity: every verdict with and without flagged runs",
        "",
        f"The tables were computed with `analyses.correlation.flagged_runs: {policy}`; here "
        "each row also under the other policy (runs flagged collapsed, undertrained or lossy "
        "left out, or kept). `called`: interval excludes 0 and p (Holm) below "
        f"{SIGNIFICANCE}. A verdict **holds** when it is called, or not, under both (`–`: "
        "a score or metric that only one policy leaves to correlate).",
        "",
    ]
    if same:
        return "\n".join([*lines, "No run was flagged: both policies give the same tables.", ""])
    keys = ["score", "intrinsic", "scope", "level"]
    values = ["partial_spearman", "partial_low", "partial_high", "p_adjusted", "called"]
    other = OTHER_FLAGGED_RUN_POLICY[policy]
    wide = table.pivot_table(
        index=keys, columns="flagged_runs", values=values, aggfunc="first", dropna=False
    ).reindex(columns=pd.MultiIndex.from_product([values, [policy, other]]))
    shown = pd.DataFrame(
        {
            "score": wide.index.get_level_values("score"),
            "scope": wide.index.get_level_values("scope"),
            "level": wide.index.get_level_values("level"),
            "intrinsic": wide.index.get_level_values("intrinsic"),
            **{
                f"{name} ρ [CI], p (Holm)": [
                    f"{_interval(rho, low, high)}, {_p(p)}"
                    for rho, low, high, p in zip(
                        wide[("partial_spearman", name)],
                        wide[("partial_low", name)],
                        wide[("partial_high", name)],
                        wide[("p_adjusted", name)],
                        strict=True,
                    )
                ]
                for name in (policy, other)
            },
            "holds": [
                "–" if pd.isna(a) or pd.isna(b) else "yes" if bool(a) == bool(b) else "**no**"
                for a, b in zip(wide[("called", policy)], wide[("called", other)], strict=True)
            ],
        }
    )
    return "\n".join([*lines, shown.to_markdown(index=False, disable_numparse=True), ""])


def left_out_markdown(notes: Sequence[str]) -> str:
    """The notes on left-out data as a Markdown section (empty without notes)."""
    if not notes:
        return ""
    return "\n".join(["", "## Left out", "", *[f"- {note}" for note in notes], ""])
