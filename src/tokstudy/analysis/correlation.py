"""Which intrinsic metric predicts downstream quality? Correlations over the study's cells.

A *cell* is one tokenizer at one vocabulary size for one language (models) or one
translation direction (NMT). Each cell has intrinsic metrics (``tables/metrics.csv``, train
and held-out split) and downstream scores averaged over seeds: NMT BLEU and chrF per
direction, MLM bits per character and PLL per word and POS / sentence accuracy and macro-F1,
clean (noise level 0) and at every noise level.

For every (intrinsic metric, split, downstream score) pair and every *scope* (one language
or direction, or ``pooled`` over all of them) :func:`correlation_table` gives Spearman's ρ
and Pearson's r, percentile bootstrap 95 % intervals that resample cells, and permutation
p-values (exact when the cells have at most as many orderings as permutations asked for).

NMT cells take the intrinsic metrics of the tokenizer the model used: the NMT stage trains
its own tokenizers per side on the NMT training split, so their metrics are computed on that
split (``train``) and on the test side (``heldout``) by the workflow; ``nmt_side`` chooses
the target side's tokenizer (default: the one whose output is decoded and scored) or the
source side's.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tokstudy.analysis.correlation_settings import CorrelationSettings
from tokstudy.cells import size_label
from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

CELL_KEYS = ["language", "tokenizer", "vocab_size"]
#: the downstream scores correlated, per task
DOWNSTREAM_METRICS = {
    "nmt": ("bleu", "chrf"),
    "mlm": ("bits_per_char", "pll_per_word"),
    "pos": ("accuracy", "macro_f1"),
    "sentence": ("accuracy", "macro_f1"),
}
POOLED = "pooled"
MIN_CELLS = 4
SCORE_KEYS = ["downstream", "task", "score_metric", "level"]
PAIR_KEYS = [*SCORE_KEYS, "intrinsic", "split"]


def _with_size_labels(frame: pd.DataFrame) -> pd.DataFrame:
    labels = [
        size_label(t, s) for t, s in zip(frame["tokenizer"], frame["vocab_size"], strict=True)
    ]
    return frame.assign(vocab_size=labels)


def intrinsic_cells(metrics: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Tidy intrinsic rows (``metrics.csv`` layout) of the chosen metrics, sizes as labels."""
    missing = sorted(set(names) - set(metrics["metric"]))
    if missing:
        raise TokstudyError(f"intrinsic metrics: no rows for {', '.join(missing)}")
    chosen = metrics[metrics["metric"].isin(names)]
    return _with_size_labels(chosen).rename(columns={"metric": "intrinsic"})[
        [*CELL_KEYS, "split", "intrinsic", "value"]
    ]


def _score_label(task: str, metric: str, level: int) -> str:
    return f"{task} {metric}" + (f" (noise {level}%)" if level else "")


def _seed_means(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    """Mean over seeds per cell and score; ``seeds`` counts the runs averaged."""
    keys = [group, *CELL_KEYS, "task", "score_metric", "level"]
    means = (
        frame.groupby(keys, sort=True)["value"]
        .agg(value="mean", seeds="count")
        .reset_index()
        .rename(columns={group: "scope"})
    )
    means["downstream"] = [
        _score_label(t, m, int(lv))
        for t, m, lv in zip(means["task"], means["score_metric"], means["level"], strict=True)
    ]
    return means


def model_scores(results: pd.DataFrame) -> pd.DataFrame:
    """Seed means of the model stage's scores (``tables/models/results.tsv``); scope = language."""
    wanted = [
        (results["task"] == task) & results["metric"].isin(metrics)
        for task, metrics in DOWNSTREAM_METRICS.items()
        if task != "nmt"
    ]
    chosen = results[np.logical_or.reduce(wanted)].rename(columns={"metric": "score_metric"})
    chosen = _with_size_labels(chosen).assign(scope=chosen["language"])
    return _seed_means(chosen.dropna(subset=["value"]), "scope")


def nmt_scores(runs: pd.DataFrame, sides: Mapping[str, str]) -> pd.DataFrame:
    """Seed means of NMT BLEU and chrF (one row per score file); scope = direction.

    ``sides`` maps a direction to the side label of the tokenizer whose intrinsic metrics
    its cells take (the ``language`` of those metric rows).
    """
    unknown = sorted(set(runs["direction"]) - set(sides))
    if unknown:
        raise TokstudyError(f"NMT scores: no tokenizer side for direction(s) {', '.join(unknown)}")
    long = runs.assign(language=runs["direction"].map(sides), task="nmt", level=0).melt(
        id_vars=["direction", "language", "tokenizer", "vocab_size", "seed", "task", "level"],
        value_vars=list(DOWNSTREAM_METRICS["nmt"]),
        var_name="score_metric",
    )
    return _seed_means(_with_size_labels(long), "direction")


def join_cells(intrinsic: pd.DataFrame, downstream: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Every (cell, intrinsic metric, split, downstream score) with both values, and notes
    on what was left out (also logged).

    Left out: cells with a downstream score but no intrinsic metrics (e.g. CharacterBERT),
    and, per downstream score, cells of its scope that lack it (a missing or NaN score).
    """
    notes = []
    metric_cells = intrinsic[CELL_KEYS].drop_duplicates()
    score_cells = downstream[["scope", *CELL_KEYS]].drop_duplicates()
    matched = score_cells.merge(metric_cells, how="left", indicator=True)
    no_metrics = matched[matched["_merge"] == "left_only"]
    if len(no_metrics):
        names = ", ".join(" ".join(map(str, row)) for row in no_metrics[CELL_KEYS].to_numpy())
        notes.append(f"{len(no_metrics)} cell(s) without intrinsic metrics left out: {names}")
    scored = downstream.dropna(subset=["value"])
    cells_per_scope = score_cells.groupby("scope").size()
    for (downstream_name, scope), rows in scored.groupby(["downstream", "scope"], sort=True):
        missing = int(cells_per_scope[scope]) - len(rows)
        if missing:
            notes.append(f"{downstream_name} ({scope}): {missing} cell(s) without a score left out")
    most_seeds = scored.groupby("downstream")["seeds"].transform("max")
    fewer = scored[scored["seeds"] < most_seeds]
    for (downstream_name, scope), rows in fewer.groupby(["downstream", "scope"], sort=True):
        notes.append(
            f"{downstream_name} ({scope}): {len(rows)} cell(s) averaged over fewer seeds "
            "(missing or NaN runs)"
        )
    for note in notes:
        log.warning("%s", note)
    joined = scored.merge(intrinsic.rename(columns={"value": "intrinsic_value"}), on=CELL_KEYS)
    undefined = joined[joined["intrinsic_value"].isna()]
    if len(undefined):
        note = f"{len(undefined)} (cell, score) pair(s) with a NaN intrinsic value left out"
        notes.append(note)
        log.warning("%s", note)
    joined = joined.dropna(subset=["intrinsic_value"]).sort_values(
        ["scope", *PAIR_KEYS, "tokenizer", "vocab_size"], kind="stable", ignore_index=True
    )
    return joined, notes


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along ``axis``: Pearson's r of average ranks (as scipy's spearmanr)."""
    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    with warnings.catch_warnings():  # a constant resample gives NaN, counted by the caller
        warnings.simplefilter("ignore")
        return stats.pearsonr(x, y, axis=axis).statistic


STATISTICS = {"spearman": _spearman, "pearson": _pearson}


def _bootstrap_interval(
    x: np.ndarray, y: np.ndarray, statistic: Any, settings: CorrelationSettings, seed: int
) -> tuple[float, float, int]:
    """Percentile interval of ``statistic`` over resampled cells; degenerate resamples
    (a constant column: the statistic is undefined) are left out and counted."""
    with warnings.catch_warnings():  # NaN resamples are counted and left out below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (x, y),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=settings.bootstrap_samples,
            confidence_level=settings.confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    distribution = result.bootstrap_distribution
    degenerate = int(np.isnan(distribution).sum())
    if degenerate == len(distribution):
        return np.nan, np.nan, degenerate
    tail = (1 - settings.confidence) / 2 * 100
    low, high = np.nanpercentile(distribution, [tail, 100 - tail])
    return float(low), float(high), degenerate


def _permutation_p(
    x: np.ndarray, y: np.ndarray, statistic: Any, settings: CorrelationSettings, seed: int
) -> float:
    """Two-sided permutation p-value: ``x`` reordered against a fixed ``y`` (exact when
    ``n!`` is at most the number of permutations asked for)."""
    return float(
        stats.permutation_test(
            (x,),
            lambda permuted, axis=-1: statistic(permuted, y, axis=axis),
            permutation_type="pairings",
            vectorized=True,
            n_resamples=settings.permutations,
            alternative="two-sided",
            rng=np.random.default_rng(seed),
        ).pvalue
    )


def correlate(
    x: np.ndarray, y: np.ndarray, settings: CorrelationSettings, seed: int = 0
) -> dict[str, Any]:
    """ρ and r of two columns with bootstrap intervals and permutation p-values.

    NaN (and a ``note``) when there are fewer than 4 cells or a column is constant.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    row: dict[str, Any] = {"n": len(x), "note": ""}
    for name in STATISTICS:
        row |= {name: np.nan, f"{name}_low": np.nan, f"{name}_high": np.nan, f"{name}_p": np.nan}
    if len(x) < MIN_CELLS:
        row["note"] = f"{len(x)} cells < {MIN_CELLS}: not computed"
        return row
    constant = [
        name for name, column in (("intrinsic", x), ("downstream", y)) if np.ptp(column) == 0
    ]
    if constant:
        row["note"] = f"{' and '.join(constant)} constant over the cells: undefined"
        return row
    notes = []
    for name, statistic in STATISTICS.items():
        row[name] = float(statistic(x, y))
        low, high, degenerate = _bootstrap_interval(x, y, statistic, settings, seed)
        row[f"{name}_low"], row[f"{name}_high"] = low, high
        if degenerate and name == "spearman":
            notes.append(f"{degenerate} constant bootstrap resamples left out")
        row[f"{name}_p"] = _permutation_p(x, y, statistic, settings, seed)
    row["note"] = "; ".join(notes)
    return row


def correlation_table(joined: pd.DataFrame, settings: CorrelationSettings) -> pd.DataFrame:
    """One row per (downstream score, intrinsic metric, split, scope); ``pooled`` rows
    combine every language (or direction) and are marked ``pooled = True``."""
    rows = []
    for key, pair in joined.groupby(PAIR_KEYS, sort=True):
        scopes = sorted(pair["scope"].unique())
        selections = [(scope, pair[pair["scope"] == scope]) for scope in scopes]
        if len(scopes) > 1:
            selections.append((POOLED, pair))
        for scope, cells in selections:
            result = correlate(
                cells["intrinsic_value"].to_numpy(),
                cells["value"].to_numpy(),
                settings,
                settings.seed,
            )
            rows.append(
                {
                    **dict(zip(PAIR_KEYS, key, strict=True)),
                    "scope": scope,
                    "pooled": scope == POOLED,
                    "seeds": int(cells["seeds"].min()),
                    **result,
                }
            )
            if result["note"]:
                log.info("%s vs %s (%s, %s): %s", key[4], key[0], key[5], scope, result["note"])
    columns = [*PAIR_KEYS, "scope", "pooled", "n", "seeds"]
    stats_columns = [f"{n}{s}" for n in STATISTICS for s in ("", "_low", "_high", "_p")]
    return pd.DataFrame(rows, columns=[*columns, *stats_columns, "note"])


def ranking(table: pd.DataFrame) -> pd.DataFrame:
    """Intrinsic metrics (and splits) ranked by |ρ| per downstream score and scope."""
    ranked = table.dropna(subset=["spearman"]).assign(abs_spearman=lambda t: t["spearman"].abs())
    ranked = ranked.sort_values(
        ["downstream", "scope", "abs_spearman", "intrinsic", "split"],
        ascending=[True, True, False, True, True],
        kind="stable",
    )
    ranked["rank"] = ranked.groupby(["downstream", "scope"]).cumcount() + 1
    columns = ["downstream", "scope", "pooled", "rank", "intrinsic", "split", "n"]
    return ranked[
        [*columns, "spearman", "spearman_low", "spearman_high", "spearman_p", "pearson"]
    ].reset_index(drop=True)


POOLED_WARNING = (
    "Rows with scope `pooled` combine every language (or translation direction): languages "
    "differ in script, corpus and score level, so a pooled correlation can come from the "
    "difference between languages alone. Read the per-language rows first."
)


def _interval(value: float, low: float, high: float) -> str:
    if np.isnan(value):
        return "–"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _p_value(value: float) -> str:
    return "–" if np.isnan(value) else f"{value:.3f}"


def correlation_markdown(table: pd.DataFrame, settings: CorrelationSettings) -> str:
    """The correlation table as Markdown: one section per downstream score."""
    tested = int(table["spearman"].notna().sum())
    lines = [
        "# Intrinsic metrics against downstream scores",
        "",
        f"Spearman ρ and Pearson r over cells (tokenizer × size; downstream scores averaged "
        f"over seeds), {settings.confidence:.0%} percentile bootstrap intervals "
        f"({settings.bootstrap_samples} resamples of cells) and two-sided permutation "
        f"p-values ({settings.permutations} permutations; exact for few cells). "
        f"{tested} correlations were computed: at p < 0.05 about one in twenty is "
        "significant by chance.",
        "",
        f"**{POOLED_WARNING}**",
        "",
    ]
    for downstream, rows in table.groupby("downstream", sort=True):
        shown = pd.DataFrame(
            {
                "intrinsic": rows["intrinsic"],
                "split": rows["split"],
                "scope": [
                    f"**{s}**" if p else s
                    for s, p in zip(rows["scope"], rows["pooled"], strict=True)
                ],
                "n": rows["n"],
                "ρ [CI]": [
                    _interval(*v)
                    for v in rows[["spearman", "spearman_low", "spearman_high"]].to_numpy()
                ],
                "p(ρ)": rows["spearman_p"].map(_p_value),
                "r [CI]": [
                    _interval(*v)
                    for v in rows[["pearson", "pearson_low", "pearson_high"]].to_numpy()
                ],
                "p(r)": rows["pearson_p"].map(_p_value),
                "note": rows["note"],
            }
        )
        lines += [f"## {downstream}", "", shown.to_markdown(index=False), ""]
    return "\n".join(lines)


def ranking_markdown(ranked: pd.DataFrame) -> str:
    """The ranking as Markdown: per downstream score and scope, best |ρ| first."""
    lines = [
        "# Which intrinsic metric predicts each downstream score best (by |ρ|)",
        "",
        f"**{POOLED_WARNING}**",
        "",
    ]
    if ranked.empty:
        return "\n".join([*lines, "No correlation could be computed (see correlation.md).", ""])
    shown = ranked.assign(
        scope=[
            f"**{s}**" if p else s for s, p in zip(ranked["scope"], ranked["pooled"], strict=True)
        ],
        spearman=[
            _interval(*v) for v in ranked[["spearman", "spearman_low", "spearman_high"]].to_numpy()
        ],
        spearman_p=ranked["spearman_p"].map(_p_value),
    ).rename(columns={"spearman": "ρ [CI]", "spearman_p": "p(ρ)", "pearson": "r"})
    columns = ["downstream", "scope", "rank", "intrinsic", "split", "n", "ρ [CI]", "p(ρ)", "r"]
    return "\n".join([*lines, shown[columns].to_markdown(index=False, floatfmt=".2f"), ""])


def _read_nmt_runs(score_files: list[Path]) -> pd.DataFrame:
    rows = [json.loads(Path(path).read_text(encoding="utf-8")) for path in score_files]
    return pd.DataFrame(rows)


def collect_cells(
    metrics_csv: Path,
    metric_names: list[str],
    model_results: Path | None,
    nmt_score_files: list[Path],
    nmt_metric_files: list[Path],
    nmt_sides: Mapping[str, str],
) -> tuple[pd.DataFrame, list[str]]:
    """Joined cells of the whole study (model cells with the study's metrics, NMT cells
    with their own tokenizers' metrics) and the notes on what was left out."""
    parts, notes = [], []
    if model_results is not None:
        metrics = intrinsic_cells(pd.read_csv(metrics_csv), metric_names)
        results = pd.read_csv(model_results, sep="\t", keep_default_na=True)
        joined, dropped = join_cells(metrics, model_scores(results))
        parts.append(joined)
        notes += dropped
    if nmt_score_files and not nmt_metric_files:
        notes.append("NMT scores left out: joint vocabularies have no per-language metrics")
        log.warning("%s", notes[-1])
    if nmt_score_files and nmt_metric_files:
        metrics = intrinsic_cells(
            pd.concat([pd.read_csv(path, sep="\t") for path in nmt_metric_files]), metric_names
        )
        joined, dropped = join_cells(
            metrics, nmt_scores(_read_nmt_runs(nmt_score_files), nmt_sides)
        )
        parts.append(joined)
        notes += dropped
    if not parts:
        raise TokstudyError("correlation: no downstream results given (models or NMT)")
    return pd.concat(parts, ignore_index=True), notes


def write_correlations(
    joined: pd.DataFrame,
    notes: list[str],
    settings: CorrelationSettings,
    outputs: dict[str, Path],
) -> pd.DataFrame:
    """Write the correlation and ranking tables (``csv``, ``markdown``, ``ranking_csv``,
    ``ranking_markdown``) and return the correlation table."""
    table = correlation_table(joined, settings)
    ranked = ranking(table)
    table.to_csv(outputs["csv"], index=False, float_format="%.6g")
    left_out = ["", "Left out:", "", *[f"- {note}" for note in notes], ""] if notes else [""]
    outputs["markdown"].write_text(
        correlation_markdown(table, settings) + "\n".join(left_out), encoding="utf-8"
    )
    ranked.to_csv(outputs["ranking_csv"], index=False, float_format="%.6g")
    outputs["ranking_markdown"].write_text(ranking_markdown(ranked), encoding="utf-8")
    log.info(
        "%d correlations (%d computed) over %d downstream scores",
        len(table),
        int(table["spearman"].notna().sum()),
        table["downstream"].nunique(),
    )
    return table


def correlation_analysis(
    metrics_csv: Path,
    metric_names: list[str],
    model_results: Path | None,
    nmt_score_files: list[Path],
    nmt_metric_files: list[Path],
    nmt_sides: Mapping[str, str],
    settings: Mapping[str, Any],
    outputs: Mapping[str, Path],
) -> pd.DataFrame:
    """The whole analysis: join, correlate, rank; tables and the scatter-plot grid.

    ``outputs``: ``csv``, ``markdown``, ``ranking_csv``, ``ranking_markdown``, ``png``.
    """
    from tokstudy.analysis.correlation_plot import plot_correlation_grid

    checked = CorrelationSettings(**settings)
    joined, notes = collect_cells(
        metrics_csv, metric_names, model_results, nmt_score_files, nmt_metric_files, nmt_sides
    )
    log.info(
        "%d cells in %d scope(s), %d downstream scores, %d intrinsic metrics",
        len(joined[["scope", *CELL_KEYS]].drop_duplicates()),
        joined["scope"].nunique(),
        joined["downstream"].nunique(),
        joined["intrinsic"].nunique(),
    )
    table = write_correlations(joined, notes, checked, outputs)
    plot_correlation_grid(joined, table, checked.plot_split, [outputs["png"]])
    return table
