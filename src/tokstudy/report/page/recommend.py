"""“Which tokenizer for this language?”: every cell of a language on the criteria the study
measured, and which cells are Pareto-optimal on a chosen set of them.

Only what the study measured goes in: the held-out intrinsic metrics (``metrics.csv``),
the cost table, the PUD premium against the reference language, the morphological
alignment and the model stage's downstream scores, each where the study has it. A cell
with no value on a chosen criterion is not placed (its line says which is missing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tokstudy.analyses.correlation.cells import score_higher_is_better
from tokstudy.analyses.morphology.spans import IN_CONTEXT
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, PRETRAINED, size_label

CELL = ["tokenizer", "size"]
#: the held-out split: criteria are measured on text the tokenizers were not trained on
SPLIT = "heldout"


#: downstream score metrics where lower is better (the rest: higher is better)
@dataclass(frozen=True)
class Criterion:
    """A column of the recommendation table and whether ``lower`` or ``higher`` is better."""

    name: str
    label: str
    better: str


@dataclass(frozen=True)
class StudyTables:
    """The study's tables the panel reads; ``None`` where the study has no such table."""

    metrics: pd.DataFrame
    cost: pd.DataFrame | None = None
    parity: pd.DataFrame | None = None
    morphology: pd.DataFrame | None = None
    downstream: pd.DataFrame | None = None
    morphscore: pd.DataFrame | None = None
    robustness: pd.DataFrame | None = None

    @classmethod
    def read(cls, metrics: Path, optional: Mapping[str, Path | None]) -> StudyTables:
        """Read ``metrics.csv`` and those of ``cost``, ``parity``, ``morphology``,
        ``morphscore``, ``robustness`` (CSV) and ``downstream`` (``results.tsv``) that are
        given and exist."""
        frames: dict[str, pd.DataFrame | None] = {}
        for key, path in optional.items():
            exists = path is not None and Path(path).is_file()
            sep = "\t" if str(path).endswith(".tsv") else ","
            frames[key] = pd.read_csv(path, sep=sep) if exists else None
        return cls(pd.read_csv(metrics), **frames)


def _metric_values(metrics: pd.DataFrame, language: str) -> pd.DataFrame:
    rows = metrics[(metrics["language"] == language) & (metrics["split"] == SPLIT)]
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, "kind"])
    labels = zip(rows["tokenizer"], rows["vocab_size"], rows["kind"], strict=True)
    rows = rows.assign(size=[size_label(t, s, k) for t, s, k in labels])
    wide = rows.pivot_table(index=[*CELL, "kind"], columns="metric", values="value")
    return wide.reset_index()


def _cost_values(cost: pd.DataFrame, language: str) -> pd.DataFrame:
    rows = cost[cost["language"] == language].assign(size=lambda f: f["size"].astype(str))
    train = rows[rows["step"] == "train"].set_index(CELL)["seconds"].rename("train_seconds")
    encode = rows[rows["step"] == "metrics"].set_index(CELL)["encode_mb_s"].rename("encode_mb_s")
    return pd.concat([train, encode], axis=1).reset_index()


def _labelled_values(
    table: pd.DataFrame, language: str, column: str, where: Mapping[str, str]
) -> dict[tuple[str, str | None], float]:
    """``column`` by (tokenizer, size), its mean over the language's rows that have the
    values of ``where`` (a column the table lacks is not filtered on): the labels of the
    parity, MorphScore and robustness tables are ``tokenizer size`` for a sized trained
    tokenizer, the bare name for ``char`` and pretrained ones."""
    rows = table[table["language"] == language]
    for key, value in where.items():
        if key in rows.columns:
            rows = rows[rows[key] == value]
    means = rows.groupby(rows["tokenizer"].astype(str), sort=True)[column].mean()
    found = {}
    for label, value in means.items():
        name, _, size = str(label).partition(" ")
        found[(name, size or None)] = float(value)
    return found


#: the criteria read from tables labelled like the parity's: key of StudyTables, column,
#: the rows read (column → value), criterion name, label, better; MorphScore is the
#: chance-corrected score of the words in context (docs/world-analyses.md)
LABELLED = (
    ("parity", "premium", {}, "premium", "premium against the reference (PUD)", "lower"),
    (
        "morphscore",
        "morphscore_corrected",
        {"encoding": IN_CONTEXT},
        "morphscore",
        "MorphScore above chance (UD lemmas, in context)",
        "higher",
    ),
    ("robustness", "inflation", {}, "noise_inflation", "token inflation under noise", "lower"),
)


def _downstream_values(results: pd.DataFrame, language: str) -> pd.DataFrame:
    """The model stage's scores of ``language``, one column per score (seed means over the
    runs that learned), and ``flags``: the runs left out (collapsed, undertrained, lossy)."""
    from tokstudy.analyses.correlation.cells import model_score_columns, size_labels
    from tokstudy.models.run_flags import drop_flagged_runs, flagged_runs

    results = results[results["language"] == language]
    scores = model_score_columns(drop_flagged_runs(results, "exclude", []))
    means = scores.drop(columns=["language", "seed"]).groupby(CELL_KEYS, sort=True).mean()
    flagged = flagged_runs(results)
    flagged = flagged.assign(vocab_size=size_labels(flagged))
    marks: dict[tuple[str, str], list[str]] = {}
    for run in flagged.itertuples(index=False):
        marks.setdefault((run.tokenizer, run.vocab_size), []).append(
            f"{run.task} seed {run.seed} {run.flags}"
        )
    index = pd.MultiIndex.from_tuples(list(marks), names=CELL_KEYS)
    flags = pd.Series([", ".join(m) for m in marks.values()], index=index, name="flags")
    values = means.join(flags, how="outer").reset_index()
    if values.empty:
        return pd.DataFrame(columns=[*CELL, "flags"])
    return values.assign(flags=values["flags"].fillna("")).rename(columns={"vocab_size": "size"})


#: a cell in the model stage's tables
CELL_KEYS = ["tokenizer", "vocab_size"]


def recommendation_table(study: StudyTables, language: str) -> tuple[pd.DataFrame, list[Criterion]]:
    """One row per cell of ``language`` (``tokenizer``, ``size``, ``kind``), one column per
    criterion the study measured for it, ``flags`` (its model runs that did not learn or were
    scored through a lossy tokenizer: left out of its downstream means), and those criteria."""
    cells = _metric_values(study.metrics, language)
    criteria = [
        Criterion(name, label, better)
        for name, label, better in (
            ("fertility", "fertility (tokens per word)", "lower"),
            ("bytes_per_token", "bytes per token", "higher"),
        )
        if name in cells.columns
    ]
    cells = cells[[*CELL, "kind", *(c.name for c in criteria)]]
    keys = [
        (t, None if s in (PRETRAINED, FULL_SIZE_LABEL) else s)
        for t, s in zip(cells["tokenizer"], cells["size"], strict=True)
    ]
    for key, column, where, name, label, better in LABELLED:
        table = getattr(study, key)
        if table is not None and column in table.columns:
            found = _labelled_values(table, language, column, where)
            cells[name] = [found.get(k, np.nan) for k in keys]
            criteria.append(Criterion(name, label, better))
    if study.morphology is not None and len(study.morphology):
        morphology = study.morphology.assign(size=study.morphology["vocab_size"].astype(str))
        morphology = morphology[morphology["language"] == language]
        morphology = morphology[morphology["encoding"] == IN_CONTEXT]  # words in context
        shares = morphology.set_index(CELL)["corrected_types"].rename("morphological_alignment")
        cells = cells.merge(shares.reset_index(), on=CELL, how="left")
        criteria.append(
            Criterion(
                "morphological_alignment",
                "morphological alignment above chance (UD, in context)",
                "higher",
            )
        )
    if study.cost is not None:
        cells = cells.merge(_cost_values(study.cost, language), on=CELL, how="left")
        criteria += [
            Criterion("train_seconds", "training time (s)", "lower"),
            Criterion("encode_mb_s", "encoding speed (MB/s)", "higher"),
        ]
    if study.downstream is not None and len(study.downstream):
        downstream = _downstream_values(study.downstream, language)
        cells = cells.merge(downstream, on=CELL, how="left")
        criteria += [
            Criterion(name, name, "higher" if score_higher_is_better(name) else "lower")
            for name in downstream.columns
            if name not in (*CELL, "flags")
        ]
    if "flags" not in cells:
        cells["flags"] = ""
    criteria = [c for c in criteria if c.name in cells and cells[c.name].notna().any()]
    columns = [*CELL, "kind", *(c.name for c in criteria), "flags"]
    frame = cells[columns].assign(flags=cells["flags"].fillna(""))
    return frame.sort_values(CELL, ignore_index=True), criteria


def _oriented(frame: pd.DataFrame, criteria: Sequence[Criterion]) -> np.ndarray:
    """Values with every criterion turned into “lower is better”."""
    signs = np.array([1.0 if c.better == "lower" else -1.0 for c in criteria])
    return frame[[c.name for c in criteria]].to_numpy(dtype=float) * signs


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def pareto(frame: pd.DataFrame, criteria: Sequence[Criterion]) -> pd.DataFrame:
    """``frame`` with ``pareto`` (no other placed cell is at least as good on every
    criterion and better on one) and ``why`` (one line: what dominates it, or what is
    missing). The page computes the same for the criteria a user ticks."""
    values = _oriented(frame, criteria)
    placed = ~np.isnan(values).any(axis=1) if len(criteria) else np.zeros(len(frame), bool)
    label = [f"{t} {s}" for t, s in zip(frame["tokenizer"], frame["size"], strict=True)]
    optimal, why = [], []
    for row in range(len(frame)):
        if not placed[row]:
            missing = [c.label for c, v in zip(criteria, values[row], strict=True) if np.isnan(v)]
            optimal.append(False)
            why.append(f"not placed: not measured: {', '.join(missing) or 'no criterion'}")
            continue
        better = [
            other
            for other in range(len(frame))
            if placed[other]
            and (values[other] <= values[row]).all()
            and (values[other] < values[row]).any()
        ]
        optimal.append(not better)
        if not better:
            why.append("Pareto-optimal: no other cell is as good on every criterion")
            continue
        other = better[0]
        detail = ", ".join(
            f"{c.label} {_fmt(frame.iloc[other][c.name])} vs {_fmt(frame.iloc[row][c.name])}"
            for c, a, b in zip(criteria, values[other], values[row], strict=True)
            if a < b
        )
        why.append(f"dominated by {label[other]}: {detail}")
    return frame.assign(pareto=optimal, why=why)


def recommendation(study: StudyTables, language: str) -> tuple[dict[str, Any], pd.DataFrame]:
    """The panel's data for one language (JSON-able) and its table (every criterion, Pareto
    over all of them: ``tables/recommendation_<language>.csv``)."""
    frame, criteria = recommendation_table(study, language)
    data = {
        "criteria": [asdict(c) for c in criteria],
        "cells": [
            {
                "tokenizer": row["tokenizer"],
                "size": str(row["size"]),
                "kind": row["kind"],
                "flags": row["flags"],
                "values": {
                    c.name: None if pd.isna(row[c.name]) else float(row[c.name]) for c in criteria
                },
            }
            for _, row in frame.iterrows()
        ],
    }
    return data, pareto(frame, criteria)
