"""Which intrinsic metric predicts downstream quality? The correlation run: a checked
cells table in, the correlation, ranking and mixed-model tables (and the plot) out.

:func:`correlate_file` is ``tokstudy correlate``; :func:`correlation_analysis` is the
workflow's rule, which first builds the study's cells table
(:func:`~tokstudy.analyses.correlation.cells.study_cells`) and then runs the same code.
The statistics are described in :mod:`tokstudy.analyses.correlation.table`.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from tokstudy.analyses.correlation.cells import (
    CELL_KEYS,
    FAMILY,
    ColumnChoice,
    intrinsic_columns,
    read_cells,
    study_cells,
    study_scores,
)
from tokstudy.analyses.correlation.markdown import (
    SIGNIFICANCE,
    comparison_markdown,
    correlation_markdown,
    family_markdown,
    left_out_markdown,
    mixed_markdown,
    ranking_markdown,
    sensitivity_markdown,
)
from tokstudy.analyses.correlation.settings import (
    OTHER_FLAGGED_RUN_POLICY,
    CorrelationSettings,
)
from tokstudy.analyses.correlation.table import (
    COLUMNS,
    comparison_table,
    correlation_table,
    mixed_table,
    ranking,
)
from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

#: output name → file name, as ``tokstudy correlate`` writes them into ``--out``
OUTPUT_FILES = {
    "csv": "correlation.csv",
    "markdown": "correlation.md",
    "ranking_csv": "correlation_ranking.csv",
    "ranking_markdown": "correlation_ranking.md",
    "mixed_csv": "correlation_mixed.csv",
    "mixed_markdown": "correlation_mixed.md",
    "family_csv": "correlation_family.csv",
    "family_markdown": "correlation_family.md",
    "comparison_csv": "correlation_comparison.csv",
    "comparison_markdown": "correlation_comparison.md",
}
#: the levels of the family table (empty without a ``family`` column)
FAMILY_LEVELS = ("within_family", "across_family")


@dataclass(frozen=True)
class Correlations:
    """The tables of one run."""

    table: pd.DataFrame
    ranking: pd.DataFrame
    mixed: pd.DataFrame
    family: pd.DataFrame
    #: the primary metric against each other one (empty without a primary)
    comparison: pd.DataFrame


def correlate(
    cells: pd.DataFrame, scores: Sequence[str], settings: CorrelationSettings
) -> Correlations:
    """Correlation, ranking and mixed-model tables of a checked cells table; a declared
    primary metric that is not one of its intrinsic columns is a one-line error."""
    intrinsic = intrinsic_columns(cells, scores)
    if settings.primary and settings.primary not in intrinsic:
        raise TokstudyError(
            f"primary metric {settings.primary!r} is not an intrinsic column of the cells "
            f"(intrinsic columns: {', '.join(intrinsic) or 'none'})"
        )
    table = correlation_table(cells, scores, settings)
    log.info(
        "%d rows (%d tested) over %d score(s)",
        len(table),
        int(table["p_within_size"].notna().sum()),
        len(scores),
    )
    levels = FAMILY_LEVELS if FAMILY in cells else ()
    family = pd.concat(
        [pd.DataFrame(columns=COLUMNS)]
        + [correlation_table(cells, scores, settings, level) for level in levels],
        ignore_index=True,
    )
    comparison = pd.concat(
        [comparison_table(cells, scores, settings, level) for level in ("cell", *levels)],
        ignore_index=True,
    )
    mixed = mixed_table(cells, scores, settings)
    return Correlations(table, ranking(table), mixed, family, comparison)


def write_correlations(
    result: Correlations,
    notes: Sequence[str],
    settings: CorrelationSettings,
    outputs: Mapping[str, Path],
) -> None:
    """Write the tables to ``outputs`` (the keys of :data:`OUTPUT_FILES`)."""
    result.table.to_csv(outputs["csv"], index=False, float_format="%.6g")
    Path(outputs["markdown"]).write_text(
        correlation_markdown(result.table, settings) + left_out_markdown(notes), encoding="utf-8"
    )
    result.ranking.to_csv(outputs["ranking_csv"], index=False, float_format="%.6g")
    Path(outputs["ranking_markdown"]).write_text(ranking_markdown(result.ranking), encoding="utf-8")
    result.mixed.to_csv(outputs["mixed_csv"], index=False, float_format="%.6g")
    Path(outputs["mixed_markdown"]).write_text(
        mixed_markdown(result.mixed, settings), encoding="utf-8"
    )
    result.family.to_csv(outputs["family_csv"], index=False, float_format="%.6g")
    Path(outputs["family_markdown"]).write_text(
        family_markdown(result.family, settings), encoding="utf-8"
    )
    result.comparison.to_csv(outputs["comparison_csv"], index=False, float_format="%.6g")
    Path(outputs["comparison_markdown"]).write_text(
        comparison_markdown(result.comparison, settings), encoding="utf-8"
    )


#: what ``tokstudy correlate`` also writes: the columns used and those skipped, and why
SUMMARY_FILE = "correlation.json"


def correlate_file(
    cells_csv: Path,
    scores: Sequence[str],
    out_dir: Path,
    settings: CorrelationSettings,
    choice: ColumnChoice | None = None,
) -> Correlations:
    """``tokstudy correlate``: check ``cells_csv``, compute, and write the tables and
    :data:`SUMMARY_FILE` into ``out_dir`` all at once (written in a temporary folder of it
    first, then moved with :func:`os.replace`: nothing half-written). Columns skipped by
    ``choice`` or for being constant are noted in ``correlation.md``, the summary and the
    log."""
    choice = choice if choice is not None else ColumnChoice()
    scores = list(dict.fromkeys(scores))
    cells = read_cells(cells_csv, scores, choice=choice)
    notes = choice.notes()
    for note in notes:
        log.warning("%s", note)
    used = [score for score in scores if score in cells.columns]
    result = correlate(cells, used, settings)
    summary = {
        "rows": len(cells),
        "cells": len(cells[CELL_KEYS].drop_duplicates()),
        "scores": used,
        "metrics": intrinsic_columns(cells, used),
        "families": sorted(cells[FAMILY].unique()) if FAMILY in cells else [],
        "skipped": [{"column": c, "reason": why} for c, why in choice.skipped.items()],
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".correlate-") as folder:
        staged = {name: Path(folder) / file for name, file in OUTPUT_FILES.items()}
        write_correlations(result, notes, settings, staged)
        summary_path = Path(folder) / SUMMARY_FILE
        summary_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        for name, path in staged.items():
            os.replace(path, out_dir / OUTPUT_FILES[name])
        os.replace(summary_path, out_dir / SUMMARY_FILE)
    return result


SENSITIVITY_COLUMNS = [
    "score",
    "intrinsic",
    "scope",
    "level",
    "flagged_runs",
    "n",
    "units",
    "partial_spearman",
    "partial_low",
    "partial_high",
    "p_adjusted",
    "called",
]


def called(table: pd.DataFrame) -> pd.Series:
    """Whether each row's association is called: its interval excludes 0 and its
    Holm-adjusted p is below 0.05."""
    excludes = (table["partial_low"] > 0) | (table["partial_high"] < 0)
    return excludes & (table["p_adjusted"] < SIGNIFICANCE)


def sensitivity(runs: Mapping[str, Correlations]) -> pd.DataFrame:
    """Every row of the correlation and family tables under each policy for flagged runs
    (``runs``: policy → its tables), with whether its association is called."""
    parts = []
    for policy, result in runs.items():
        rows = pd.concat([result.table, result.family], ignore_index=True)
        parts.append(rows.assign(flagged_runs=policy, called=called(rows)))
    return pd.concat(parts, ignore_index=True)[SENSITIVITY_COLUMNS]


def correlation_analysis(
    metrics_csv: Path,
    metric_names: list[str],
    model_results: Path | None,
    nmt_score_files: list[Path],
    nmt_metric_files: list[Path],
    nmt_sides: Mapping[str, str],
    settings: CorrelationSettings,
    outputs: Mapping[str, Path],
    families: Mapping[str, str] | None = None,
) -> Correlations:
    """The workflow's analysis: the study's cells table (``cells``, with ``cells_json``
    recording what was left out), then :func:`correlate` and the tables, and the plot
    (``png``); ``sensitivity_csv``/``sensitivity_markdown``: every verdict under both
    policies for flagged runs (collapsed, undertrained, lossy). ``families``: each study
    tokenizer's family (a named variant's is its algorithm's)."""
    from tokstudy.analyses.correlation.plot import plot_correlation_grid

    sources = (metrics_csv, metric_names, model_results, nmt_score_files, nmt_metric_files)
    cells, notes = study_cells(
        *sources, nmt_sides, flagged_runs=settings.flagged_runs, families=families
    )
    scores = study_scores(cells)
    # every digit: the tables below are computed from this file as written, exactly what
    # ``tokstudy correlate`` on it computes (rounded values could tie and change ranks)
    cells.to_csv(outputs["cells"], index=False)
    choice = ColumnChoice()
    checked_cells = read_cells(Path(outputs["cells"]), scores, study_table=True, choice=choice)
    notes += choice.notes()
    Path(outputs["cells_json"]).write_text(
        json.dumps({"rows": len(cells), "scores": scores, "left_out": notes}, indent=2) + "\n",
        encoding="utf-8",
    )
    intrinsic = intrinsic_columns(checked_cells, scores)
    if not scores or not intrinsic:
        notes.append("no downstream score or no intrinsic metric varies over the cells")
        log.warning("%s: nothing to correlate", notes[-1])
    result = correlate(checked_cells, scores, settings)
    write_correlations(result, notes, settings, outputs)
    plot_correlation_grid(
        checked_cells, scores, result.table, settings.plot_split, [outputs["png"]]
    )
    other = OTHER_FLAGGED_RUN_POLICY[settings.flagged_runs]
    other_cells, _ = study_cells(*sources, nmt_sides, flagged_runs=other, families=families)
    if other_cells.equals(cells):
        log.info("no flagged run: the verdicts under flagged_runs: %s are the same", other)
        other_result = result
    else:
        # read back as written, as the main cells are; a score every flagged run carried
        # is gone under the other policy, and so is its sensitivity row
        other_scores = study_scores(other_cells)
        other_cells.to_csv(outputs["sensitivity_csv"], index=False)
        read_back = read_cells(Path(outputs["sensitivity_csv"]), other_scores, study_table=True)
        used = [score for score in other_scores if score in read_back.columns]
        primary = settings.primary if settings.primary in intrinsic_columns(read_back, used) else ""
        other_result = correlate(read_back, used, replace(settings, primary=primary))
    runs = {settings.flagged_runs: result, other: other_result}
    table = sensitivity(runs)
    table.to_csv(outputs["sensitivity_csv"], index=False, float_format="%.6g")
    Path(outputs["sensitivity_markdown"]).write_text(
        sensitivity_markdown(table, settings.flagged_runs, other_cells.equals(cells)),
        encoding="utf-8",
    )
    return result
