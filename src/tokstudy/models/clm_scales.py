"""Does the tokenizer ranking of a small causal LM hold at a larger scale? Per language
and pair of scales: Kendall's τ between the tokenizers' bits per byte at the two scales
within each vocabulary size (averaged over the sizes), and whether the larger scale is
lower (better). The tokenizer is the unit: intervals resample tokenizers with all their
cells, τ's p relabels tokenizers at the larger scale (the same relabelling at every
size), the difference's p is Wilcoxon's over the tokenizers' mean differences; each kind
of p Holm-adjusted over the rows. Seeds are held fixed: only the seeds both scales trained
are used. The table is given without the flagged runs and with them
(:func:`scale_agreement_by_flags`)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tokstudy.models.config import CLM_PRESETS
from tokstudy.statistics.bootstrap import cluster_interval
from tokstudy.statistics.permutation import stratified_permutation_test
from tokstudy.statistics.significance import holm
from tokstudy.statistics.units import Units

#: a cell of the comparison: one tokenizer at one vocabulary size
CELL_KEYS = ["tokenizer", "vocab_size"]
#: relabellings of the tokenizers for τ's p (all of them when there are no more)
PERMUTATIONS = 2000

COLUMNS = [
    "language",
    "smaller",
    "larger",
    "seeds",
    "cells",
    "tokenizers",
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


def tau_within_size(smaller: np.ndarray, larger: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Kendall's τ of the two scales' bits per byte over the tokenizers of each vocabulary
    size, averaged over the sizes with two or more (along the last axis: a batch of
    resamples gives one τ each); NaN where no size has a defined τ."""
    smaller, larger = np.atleast_2d(smaller), np.atleast_2d(larger)
    taus = []
    for row_smaller, row_larger in zip(smaller, larger, strict=True):
        per_size = [
            stats.kendalltau(row_smaller[sizes == size], row_larger[sizes == size]).statistic
            for size in np.unique(sizes)
            if np.sum(sizes == size) > 1
        ]
        defined = [tau for tau in per_size if not np.isnan(tau)]
        taus.append(np.mean(defined) if defined else np.nan)
    return np.asarray(taus) if len(taus) > 1 else np.asarray(taus[0])


def _tau_test(smaller, larger, sizes, units: Units, permutations: int, seed: int) -> float:
    """Two-sided p of τ within size, the larger scale's tokenizers relabelled."""

    def statistic(orders: np.ndarray, axis: int = -1) -> np.ndarray:
        moved = units.relabelled(larger, np.atleast_2d(orders))
        return tau_within_size(np.broadcast_to(smaller, moved.shape), moved, sizes)

    units_index = np.arange(len(units.clusters), dtype=float)
    result = stratified_permutation_test(
        units_index, units.blocks, statistic, n_resamples=permutations, seed=seed
    )
    return result.pvalue


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
    table: pd.DataFrame,
    *,
    bootstrap_resamples: int,
    bootstrap_seed: int,
    permutations: int = PERMUTATIONS,
) -> pd.DataFrame:
    """One row per language and pair of scales (smaller preset first; two scales of one
    preset, e.g. two budgets, by name) with at least two shared cells: Kendall's τ within
    size of the cells' bits per byte (:func:`tau_within_size`) with its p from relabelling
    the tokenizers (exact up to ``permutations`` relabellings), the larger minus the
    smaller scale's mean bits per byte (negative: the larger is better) with Wilcoxon's
    signed-rank p over the tokenizers' mean differences, and percentile bootstrap
    intervals (95 %, tokenizers resampled with all their cells) of both; each kind of
    p-value Holm-adjusted over the rows.

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
            sizes = wide.index.get_level_values("vocab_size").to_numpy(dtype=str)
            tokenizers = wide.index.get_level_values("tokenizer")
            units = Units.of(tokenizers, sizes)  # blocks: the tokenizers with the same sizes
            resampling = {
                "n_resamples": bootstrap_resamples,
                "confidence": 0.95,
                "seed": bootstrap_seed,
            }
            tau = cluster_interval(
                [a], [np.array([v]) for v in b], units.clusters, units.blocks,
                lambda x, y, positions, sizes=sizes: tau_within_size(x, y, sizes[positions]),
                **resampling,
            )  # fmt: skip
            difference = cluster_interval(
                [a], [np.array([v]) for v in b], units.clusters, units.blocks,
                lambda x, y, positions: np.mean(y - x, axis=-1), **resampling,
            )  # fmt: skip
            per_tokenizer = np.array([np.mean(b[c] - a[c]) for c in units.clusters])
            differs = not np.all(per_tokenizer == 0) and len(per_tokenizer) > 1
            rows.append(
                {
                    "language": language,
                    "smaller": smaller,
                    "larger": larger,
                    "seeds": " ".join(map(str, seeds)),
                    "cells": len(wide),
                    "tokenizers": len(units.clusters),
                    "kendall_tau": float(tau_within_size(a, b, sizes)),
                    "tau_low": tau.low,
                    "tau_high": tau.high,
                    "p_tau": _tau_test(a, b, sizes, units, permutations, bootstrap_seed),
                    "mean_bpb_smaller": float(a.mean()),
                    "mean_bpb_larger": float(b.mean()),
                    "mean_difference": float(np.mean(b - a)),
                    "difference_low": difference.low,
                    "difference_high": difference.high,
                    "larger_better_cells": int(np.sum(b < a)),
                    "p_difference": (
                        float(stats.wilcoxon(per_tokenizer).pvalue) if differs else 1.0
                    ),
                }
            )
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if not c.endswith("_adjusted")])
    frame["p_tau_adjusted"] = holm(frame["p_tau"]) if len(frame) else []
    frame["p_difference_adjusted"] = holm(frame["p_difference"]) if len(frame) else []
    return frame[COLUMNS]


def scale_agreement_by_flags(table: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """:func:`scale_agreement` without the flagged runs (``flagged_runs`` ``excluded``:
    undertrained or lossy, whose bits per byte says nothing of their tokenizer) and with
    every run (``kept``); only ``kept`` when nothing is flagged. Each set of rows is
    Holm-adjusted on its own. ``data_starved`` runs stay: being short of data at the larger
    scale is part of what the comparison measures."""
    kept = scale_agreement(table, **options).assign(flagged_runs="kept")
    flagged = table["undertrained"].astype(bool) | table["lossy"].astype(bool)
    parts = [kept]
    if flagged.any():
        excluded = scale_agreement(table[~flagged], **options)
        parts.insert(0, excluded.assign(flagged_runs="excluded"))
    return pd.concat(parts, ignore_index=True)[["flagged_runs", *COLUMNS]]


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
