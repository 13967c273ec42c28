"""The cells table of the correlation analysis: one row per cell and seed.

A *cell* is one tokenizer at one vocabulary size in one scope: a language (models) or a
translation direction (NMT). ``CELLS.csv`` has the key columns ``language`` (the scope),
``tokenizer``, ``vocab_size`` and ``seed`` and numeric columns: the downstream scores named
on the command line, every other one an intrinsic metric. :func:`read_cells` checks such a
table; :func:`study_cells` builds it from a study's outputs (seeds kept apart). An optional
``family`` column names each tokenizer's family (one per tokenizer).
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.analyses.correlation.settings import MIN_CELLS, MIN_FAMILY_TOKENIZERS
from tokstudy.errors import TokstudyError, one_line
from tokstudy.metrics.compute import METRICS, total
from tokstudy.models.run_flags import drop_flagged_runs
from tokstudy.models.task_registry import TASKS
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, size_label
from tokstudy.tokenizers.registry import family_of

log = logging.getLogger(__name__)

CELL_KEYS = ["language", "tokenizer", "vocab_size"]
KEYS = [*CELL_KEYS, "seed"]
#: an optional label column: the tokenizer's family (a study's table takes it from
#: its entry in :data:`tokstudy.tokenizers.registry.ADAPTERS`); with it, the family analyses run
FAMILY = "family"
#: every column that is not a number
LABELS = [*KEYS, FAMILY]


def label_columns(cells: pd.DataFrame) -> list[str]:
    """The label columns a cells table has: the keys, and ``family`` when present."""
    return [column for column in LABELS if column in cells.columns]


def intrinsic_columns(cells: pd.DataFrame, scores: Sequence[str]) -> list[str]:
    """The intrinsic metric columns of a cells table: neither a label nor a score."""
    return [c for c in cells.columns if c not in LABELS and c not in scores]


#: the downstream scores the study's cells carry, per task (the only list of them)
DOWNSTREAM_METRICS: dict[str, tuple[str, ...]] = {
    "nmt": ("bleu", "chrf"),
    **{name: task.metrics() for name, task in TASKS.items() if task.scores},
}
#: what a reader must know about a task's scores, shown beside each of them (the registry's)
SCORE_NOTES: dict[str, str] = {name: task.note for name, task in TASKS.items() if task.note}


def score_name(task: str, metric: str, level: int = 0) -> str:
    """Column name of a task's score, e.g. ``pos_accuracy`` or ``mlm_bits_per_char_noise20``."""
    return f"{task}_{metric}" + (f"_noise{level}" if level else "")


def score_task(name: str) -> str | None:
    """The task whose score column ``name`` is (:func:`score_name`), or ``None``."""
    for task, metrics in DOWNSTREAM_METRICS.items():
        for metric in metrics:
            if re.fullmatch(rf"{score_name(task, metric)}(_noise\d+)?(_[a-z]\w*)?", name):
                return task
    return None


def score_higher_is_better(name: str) -> bool:
    """Whether a higher value of the score column ``name`` is better (the task registry's
    direction of its metric; NMT's BLEU and chrF are)."""
    task = score_task(name)
    for score in TASKS[task].scores if task in TASKS else ():
        if re.fullmatch(rf"{score_name(task, score.metric)}(_noise\d+)?(_[a-z]\w*)?", name):
            return score.higher_is_better
    return True


def score_note(name: str) -> str:
    """The note on a score column (its task's entry of :data:`SCORE_NOTES`), or ``""``."""
    return SCORE_NOTES.get(score_task(name) or "", "")


def _numeric(frame: pd.DataFrame, column: str, source: str) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise TokstudyError(
            f"{source}: column {column!r}, row {row + 2}: {frame[column].iloc[row]!r} is not a "
            "number"
        )
    infinite = np.isinf(values.to_numpy(dtype=float))
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0])
        raise TokstudyError(
            f"{source}: column {column!r}, row {row + 2}: {frame[column].iloc[row]!r} is not a "
            "finite number (leave the cell empty for a missing value)"
        )
    return values


#: metrics of the metrics table that are counts of the corpus (``lines``, ``words``…), not
#: properties of a tokenizer: left out of the intrinsic columns unless ``--metrics`` names them
COUNT_METRICS = tuple(name for name, metric in METRICS.items() if metric.function is total)


def count_column(name: str) -> bool:
    """Whether ``name`` is a count of :data:`COUNT_METRICS`, alone or ``{count}_{split}``."""
    return any(re.fullmatch(rf"{count}(_[a-z]\w*)?", name) for count in COUNT_METRICS)


@dataclass(frozen=True)
class ColumnChoice:
    """Which numeric columns are intrinsic metrics: ``metrics`` (all others when empty)
    less ``exclude``; every column left out is listed in ``skipped`` (column → why)."""

    metrics: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """One line per skipped column."""
        return [f"{column} skipped: {why}" for column, why in self.skipped.items()]


def _chosen_columns(
    numeric: list[str], scores: Sequence[str], source: str, choice: ColumnChoice
) -> list[str]:
    """The score and intrinsic columns to keep, the others recorded in ``choice.skipped``."""
    for flag, names in (("--metrics", choice.metrics), ("--exclude", choice.exclude)):
        unknown = [name for name in names if name not in numeric]
        if unknown:
            raise TokstudyError(
                f"{flag}: unknown column(s) {', '.join(unknown)} (columns of {source}: "
                f"{', '.join(numeric) or 'none'})"
            )
    both = sorted(set(choice.metrics) & set(scores))
    if both:
        raise TokstudyError(f"--metrics: {', '.join(both)} named in --scores too")
    kept = list(scores)
    for column in numeric:
        if column in scores:
            continue
        if column in choice.exclude:
            choice.skipped[column] = "left out by --exclude"
        elif choice.metrics and column not in choice.metrics:
            choice.skipped[column] = "not named in --metrics"
        elif not choice.metrics and count_column(column):
            choice.skipped[column] = "a count, not a metric (name it in --metrics to keep it)"
        elif not choice.metrics and score_task(column):
            choice.skipped[column] = "a downstream score not named in --scores"
        else:
            kept.append(column)
    return kept


def check_cells(
    frame: pd.DataFrame,
    scores: Sequence[str],
    source: str,
    study_table: bool = False,
    choice: ColumnChoice | None = None,
) -> pd.DataFrame:
    """``frame`` as a checked cells table: numbers parsed, one row per cell and seed.

    One-line :class:`TokstudyError` naming ``source`` and the column for: a missing key
    column, no score or an unknown one, a non-numeric or infinite value (empty is missing),
    a repeated (cell, seed), fewer than 4 cells, no intrinsic column left. Columns are
    chosen by ``choice`` (:class:`ColumnChoice`); a constant or empty column is skipped,
    and every skipped column is listed in ``choice.skipped``. A study's own table
    (``study_table``) may have no score, no intrinsic metric or fewer than 4 cells: its
    tables then say so (empty, or rows "not computed") instead of stopping the study.
    """
    choice = choice if choice is not None else ColumnChoice()
    scores = list(dict.fromkeys(scores))
    missing = [column for column in KEYS if column not in frame.columns]
    if missing:
        raise TokstudyError(f"{source}: missing column(s) {', '.join(missing)}")
    numeric = [column for column in frame.columns if column not in LABELS]
    if not scores and not study_table:
        raise TokstudyError("--scores: name at least one downstream score column")
    unknown = [score for score in scores if score not in numeric]
    if unknown:
        raise TokstudyError(
            f"--scores: unknown score(s) {', '.join(unknown)} (columns of {source}: "
            f"{', '.join(numeric) or 'none'})"
        )
    numeric = _chosen_columns(numeric, scores, source, choice)
    checked = frame[KEYS].astype(str).copy()
    for column in ("language", "tokenizer", "seed"):
        empty = frame[column].isna()
        if empty.any():
            raise TokstudyError(
                f"{source}: column {column!r}, row {int(np.flatnonzero(empty)[0]) + 2} is empty"
            )
    sizes = _numeric(frame, "vocab_size", source)
    if sizes.isna().any() or (sizes <= 0).any():
        row = int(np.flatnonzero((sizes.isna() | (sizes <= 0)).to_numpy())[0])
        raise TokstudyError(
            f"{source}: column 'vocab_size', row {row + 2}: a vocabulary size must be a "
            f"positive number, got {frame['vocab_size'].iloc[row]!r}"
        )
    checked["vocab_size"] = sizes.astype(float)
    if FAMILY in frame.columns:
        checked[FAMILY] = _families(frame, source, study_table)
    for column in numeric:
        values = _numeric(frame, column, source)
        if values.nunique() < 2:
            choice.skipped[column] = "constant or empty over the cells: nothing to correlate"
        else:
            checked[column] = values
    left = [score for score in scores if score in checked.columns]
    if scores and not left and not study_table:
        raise TokstudyError(
            f"{source}: every score column is constant or empty ({', '.join(scores)})"
        )
    intrinsic = intrinsic_columns(checked, scores)
    if not intrinsic and not study_table:
        skipped = ", ".join(choice.skipped) or "none"
        raise TokstudyError(
            f"{source}: no intrinsic metric column left besides the scores (skipped: {skipped})"
        )
    repeated = checked.duplicated(KEYS)
    if repeated.any():
        row = int(np.flatnonzero(repeated.to_numpy())[0])
        raise TokstudyError(f"{source}: row {row + 2} repeats a (cell, seed) of an earlier row")
    cells = len(checked[CELL_KEYS].drop_duplicates())
    if cells < MIN_CELLS and not study_table:
        raise TokstudyError(f"{source}: {cells} cell(s), at least {MIN_CELLS} are needed")
    return checked


def _families(frame: pd.DataFrame, source: str, study_table: bool) -> pd.Series:
    """The ``family`` column: never empty, one family per tokenizer, and (outside a
    study's own table, whose families of two are left out of the within-family level and
    noted) no family of exactly two tokenizers: too few to compare within (one-line
    errors)."""
    families = frame[FAMILY]
    empty = families.isna() | (families.astype(str).str.strip() == "")
    if empty.any():
        raise TokstudyError(
            f"{source}: column 'family', row {int(np.flatnonzero(empty.to_numpy())[0]) + 2} "
            "is empty"
        )
    per_tokenizer = families.groupby(frame["tokenizer"]).nunique()
    if (per_tokenizer > 1).any():
        tokenizer = per_tokenizer[per_tokenizer > 1].index[0]
        names = sorted(set(families[frame["tokenizer"] == tokenizer]))
        raise TokstudyError(
            f"{source}: column 'family': tokenizer {tokenizer!r} has several ({', '.join(names)})"
        )
    members = frame.groupby(families.astype(str))["tokenizer"].unique()
    pairs = [family for family, names in members.items() if len(names) == 2]
    if pairs and not study_table:
        names = ", ".join(sorted(members[pairs[0]]))
        raise TokstudyError(
            f"{source}: column 'family': family {pairs[0]!r} has 2 tokenizers ({names}); a "
            f"family compared within needs at least {MIN_FAMILY_TOKENIZERS} (give them their "
            "own families, or one with more)"
        )
    return families.astype(str)


def _separator(path: Path) -> str:
    """The field separator of the CSV at ``path``: comma, semicolon or tab, sniffed from
    its first line by :class:`csv.Sniffer` (a comma when it cannot tell)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        header = handle.readline(1 << 16)
    try:
        return csv.Sniffer().sniff(header, delimiters=",;\t").delimiter
    except csv.Error:
        return ","


def _check_header(path: Path, separator: str) -> None:
    """A column named twice is an error naming it (pandas would read the second copy as
    another column, ``name.1``)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        header = next(csv.reader(handle, delimiter=separator), [])
    seen: set[str] = set()
    for name in (cell.strip() for cell in header):
        if name in seen:
            raise TokstudyError(f"{path}: column {name!r} appears twice in the header")
        seen.add(name)


def read_cells(
    path: Path,
    scores: Sequence[str],
    study_table: bool = False,
    choice: ColumnChoice | None = None,
) -> pd.DataFrame:
    """The cells table at ``path``, checked (:func:`check_cells`); a semicolon- or
    tab-separated file is read as such (and said on the log)."""
    if not Path(path).is_file():
        raise TokstudyError(f"{path}: no such file")
    separator = _separator(Path(path))
    if separator != ",":
        log.warning("%s: read as %s-separated", path, "tab" if separator == "\t" else separator)
    _check_header(Path(path), separator)
    try:
        frame = pd.read_csv(path, sep=separator, dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise TokstudyError(f"{path}: not a CSV table ({one_line(exc)})") from exc
    return check_cells(frame, scores, str(path), study_table, choice)


def size_labels(frame: pd.DataFrame) -> pd.Series:
    """Each row's vocabulary size as a string (:func:`tokstudy.tokenizers.cells.size_label`)."""
    labels = [
        size_label(tokenizer, size)
        for tokenizer, size in zip(frame["tokenizer"], frame["vocab_size"], strict=True)
    ]
    return pd.Series(labels, index=frame.index)


def _wide_intrinsic(metrics: pd.DataFrame, names: Sequence[str], source: str) -> pd.DataFrame:
    """Intrinsic metrics as one ``{metric}_{split}`` column each, one row per cell."""
    missing = sorted(set(names) - set(metrics["metric"]))
    if missing:
        raise TokstudyError(f"{source}: no rows for intrinsic metric(s) {', '.join(missing)}")
    chosen = metrics[metrics["metric"].isin(names)]
    labelled = chosen.assign(
        column=chosen["metric"] + "_" + chosen["split"], vocab_size=size_labels(chosen)
    )
    return _wide(labelled, CELL_KEYS)


def _wide(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One column per ``column`` value; only the key combinations present, NaN kept."""
    wide = frame.groupby([*keys, "column"], sort=True)["value"].first().unstack("column")
    return wide.reset_index().rename_axis(columns=None)


def model_score_columns(results: pd.DataFrame) -> pd.DataFrame:
    """The model stage's scores (``results.tsv``) as one column per task, metric and level."""
    wanted = [
        (results["task"] == task) & results["metric"].isin(metrics)
        for task, metrics in DOWNSTREAM_METRICS.items()
        if task != "nmt"
    ]
    chosen = results[np.logical_or.reduce(wanted)]
    # a task run at several model scales (clm) keeps one column per scale: ``_{scale}``
    scales = chosen["scale"] if "scale" in chosen else pd.Series(np.nan, index=chosen.index)
    names = [
        score_name(t, m, int(lv)) + (f"_{scale}" if isinstance(scale, str) and scale else "")
        for t, m, lv, scale in zip(
            chosen["task"], chosen["metric"], chosen["level"], scales, strict=True
        )
    ]
    return _wide(chosen.assign(column=names, vocab_size=size_labels(chosen)), KEYS)


def _nmt_scores(score_files: Sequence[Path]) -> pd.DataFrame:
    """BLEU and chrF of every NMT run (one JSON file each); the scope is the direction."""
    runs = pd.DataFrame([json.loads(Path(p).read_text(encoding="utf-8")) for p in score_files])
    columns = {metric: score_name("nmt", metric) for metric in DOWNSTREAM_METRICS["nmt"]}
    return runs.assign(vocab_size=size_labels(runs)).rename(columns=columns)[
        ["direction", "tokenizer", "vocab_size", "seed", *columns.values()]
    ]


def _join(intrinsic: pd.DataFrame, scores: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Score rows with their cell's intrinsic metrics; cells without metrics left out."""
    joined = scores.merge(intrinsic, on=CELL_KEYS, how="left", indicator=True)
    lost = joined[joined["_merge"] == "left_only"][CELL_KEYS].drop_duplicates()
    if len(lost):
        names = ", ".join(" ".join(map(str, row)) for row in lost.to_numpy())
        notes.append(f"{len(lost)} cell(s) without intrinsic metrics left out: {names}")
    return joined[joined["_merge"] == "both"].drop(columns="_merge")


def study_cells(
    metrics_csv: Path,
    metric_names: Sequence[str],
    model_results: Path | None,
    nmt_score_files: Sequence[Path],
    nmt_metric_files: Sequence[Path],
    nmt_sides: Mapping[str, str],
    flagged_runs: str = "exclude",
    families: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The study's cells table (one row per cell and seed, seeds not averaged) and notes on
    what was left out (also logged): the scores of runs flagged collapsed, undertrained or
    lossy (unless ``flagged_runs`` is ``keep``: :mod:`~tokstudy.models.run_flags`; the
    cell keeps its metrics and its place among its tokenizer's cells), cells
    without intrinsic metrics (CharacterBERT), cells of a tokenizer whose data sets its size
    (no vocabulary size to control for), intrinsic columns constant over every cell
    (nothing to correlate). Each row's ``family`` is its tokenizer's: given in
    ``families`` (a study's, where a named variant has its algorithm's), else
    :func:`tokstudy.tokenizers.registry.family_of`."""
    parts, notes = [], []
    if model_results is not None:
        intrinsic = _wide_intrinsic(pd.read_csv(metrics_csv), metric_names, str(metrics_csv))
        results = pd.read_csv(model_results, sep="\t")
        scores = model_score_columns(drop_flagged_runs(results, flagged_runs, notes))
        # a cell and seed whose runs were all left out keeps its row (metrics, no score)
        scores = model_score_columns(results)[KEYS].merge(scores, on=KEYS, how="left")
        parts.append(_join(intrinsic, scores, notes))
    if nmt_score_files and not nmt_metric_files:
        notes.append("NMT scores left out: joint vocabularies have no per-language metrics")
    if nmt_score_files and nmt_metric_files:
        metrics = pd.concat([pd.read_csv(path, sep="\t") for path in nmt_metric_files])
        intrinsic = _wide_intrinsic(metrics, metric_names, "NMT tokenizer metrics")
        runs = _nmt_scores(nmt_score_files)
        unknown = sorted(set(runs["direction"]) - set(nmt_sides))
        if unknown:
            raise TokstudyError(f"NMT scores: no tokenizer side for direction(s) {unknown}")
        runs = runs.assign(language=runs["direction"].map(nmt_sides))
        joined = _join(intrinsic, runs, notes)
        parts.append(joined.drop(columns="language").rename(columns={"direction": "language"}))
    if not parts:
        raise TokstudyError("correlation: no downstream results given (models or NMT)")
    cells = pd.concat(parts, ignore_index=True)
    unsized = cells["vocab_size"] == FULL_SIZE_LABEL
    if unsized.any():
        names = sorted(set(cells.loc[unsized, "tokenizer"]))
        notes.append(
            f"{int(unsized.sum())} row(s) of tokenizer(s) without a vocabulary size left out "
            f"(size {FULL_SIZE_LABEL!r}: {', '.join(names)})"
        )
        cells = cells[~unsized]
    known = dict(families or {})
    family = [known.get(name) or family_of(name) for name in cells["tokenizer"]]
    cells = cells.assign(**{FAMILY: family})
    for column in [c for c in cells.columns if c not in LABELS]:
        if cells[column].nunique() < 2:
            kind = "score" if score_task(column) else "intrinsic"
            notes.append(f"{kind} {column} constant or empty over every cell: left out")
            cells = cells.drop(columns=column)
    scores = study_scores(cells)
    for note in notes:
        log.warning("%s", note)
    ordered = cells[[*LABELS, *sorted(intrinsic_columns(cells, scores)), *sorted(scores)]]
    return ordered.sort_values(KEYS, kind="stable", ignore_index=True), notes


def study_scores(cells: pd.DataFrame) -> list[str]:
    """The score columns of a study's cells table (named by :func:`score_name`)."""
    return sorted(column for column in cells.columns if score_task(column))
