"""Does the tokenizer ranking of a small causal LM hold at a larger scale? Per language
and pair of scales: Kendall's τ between the cells' bits per byte at the two scales, and
whether the larger scale is lower (better), each with a bootstrap interval over cells and a
Holm-adjusted p-value. Seeds are held fixed: only the seeds both scales trained are used."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

from tokstudy.models.config import CLM_PRESETS
from tokstudy.statistics.bootstrap import bootstrap_interval
from tokstudy.statistics.significance import holm

#: a cell of the comparison: one tokenizer at one vocabulary size
CELL_KEYS = ["tokenizer", "vocab_size"]

COLUMNS = [
    "language",
    "smaller",
    "larger",
    "seeds",
    "cells",
    "kendall_tau",
    "tau_low",
    "tau_high",
    "p_tau",
    "p_tau_adjusted",
    "mean_bpb_smaller",
    "mean_bpb_larger",
    "mean_difference",
    "difference_low",
    "difference_high",
    "larger_better_cells",
    "p_difference",
    "p_difference_adjusted",
]


def _kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.kendalltau(x, y).statistic)


def _mean_difference(smaller: np.ndarray, larger: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(larger - smaller, axis=axis)


def _paired_cells(table: pd.DataFrame, language: str, smaller: str, larger: str) -> tuple:
    """The cells both scales trained in ``language``, each scale's bits per byte averaged
    over the seeds both scales share; ``(seeds, frame)``."""
    rows = table[table["language"] == language]
    seeds = sorted(
        set(rows.loc[rows["scale"] == smaller, "seed"])
        & set(rows.loc[rows["scale"] == larger, "seed"])
    )
    shared = rows[rows["seed"].isin(seeds) & rows["scale"].isin([smaller, larger])]
    wide = shared.pivot_table(
        index=CELL_KEYS, columns="scale", values="bits_per_byte", aggfunc="mean"
    ).dropna()
    return seeds, wide.sort_index()


def scale_agreement(
    table: pd.DataFrame, *, bootstrap_resamples: int, bootstrap_seed: int
) -> pd.DataFrame:
    """One row per language and pair of scales (smaller preset first; two scales of one
    preset, e.g. two budgets, by name) with at least two shared cells: Kendall's τ of the
    cells' bits per byte (scipy's p, exact for small samples), the larger minus the
    smaller scale's mean bits per byte (negative: the larger is better) with its Wilcoxon
    signed-rank p over cells, and percentile bootstrap intervals (95 %, cells resampled)
    of both; each kind of p-value Holm-adjusted over the rows.

    ``table``: the causal-LM table (``scale, language, tokenizer, vocab_size, seed,
    bits_per_byte``)."""
    order = {preset: rank for rank, preset in enumerate(CLM_PRESETS)}
    presets = table["preset"] if "preset" in table else table["scale"]
    preset_of = dict(zip(table["scale"], presets, strict=True))
    scales = sorted(set(table["scale"]), key=lambda scale: (order[preset_of[scale]], scale))
    rows = []
    for language in sorted(set(table["language"])):
        for smaller, larger in itertools.combinations(scales, 2):
            seeds, wide = _paired_cells(table, language, smaller, larger)
            if len(wide) < 2:
                continue
            a, b = wide[smaller].to_numpy(), wide[larger].to_numpy()
            resampling = {
                "n_resamples": bootstrap_resamples,
                "confidence": 0.95,
                "seed": bootstrap_seed,
            }
            tau = bootstrap_interval((a, b), _kendall_tau, vectorized=False, **resampling)
            difference = bootstrap_interval((a, b), _mean_difference, **resampling)
            differs = not np.all(a == b)
            rows.append(
                {
                    "language": language,
                    "smaller": smaller,
                    "larger": larger,
                    "seeds": " ".join(map(str, seeds)),
                    "cells": len(wide),
                    "kendall_tau": _kendall_tau(a, b),
                    "tau_low": tau.low,
                    "tau_high": tau.high,
                    "p_tau": float(stats.kendalltau(a, b).pvalue),
                    "mean_bpb_smaller": float(a.mean()),
                    "mean_bpb_larger": float(b.mean()),
                    "mean_difference": float(np.mean(b - a)),
                    "difference_low": difference.low,
                    "difference_high": difference.high,
                    "larger_better_cells": int(np.sum(b < a)),
                    "p_difference": float(stats.wilcoxon(b, a).pvalue) if differs else 1.0,
                }
            )
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if not c.endswith("_adjusted")])
    frame["p_tau_adjusted"] = holm(frame["p_tau"]) if len(frame) else []
    frame["p_difference_adjusted"] = holm(frame["p_difference"]) if len(frame) else []
    return frame[COLUMNS]


def data_starved(table: pd.DataFrame) -> pd.Series:
    """Per run of the ``clm`` table: whether a smaller model of the same cell (language,
    tokenizer, vocabulary size) ends with a lower validation loss (mean over its seeds, the
    same validation lines): then the larger model had too little data for its size."""
    cell = ["language", *CELL_KEYS, "validation_lines"]
    means = table.groupby([*cell, "parameters"], as_index=False)["best_validation_loss"].mean()
    pairs = table.reset_index().merge(means, on=cell, suffixes=("", "_other"))
    beaten = (pairs["parameters_other"] < pairs["parameters"]) & (
        pairs["best_validation_loss_other"] < pairs["best_validation_loss"]
    )
    return beaten.groupby(pairs["index"]).any().reindex(table.index, fill_value=False)
