"""A study too long for one machine, run in pieces and pooled: each piece is the same study
narrowed to some of its languages and seeds (its own config file and results folder),
exported as the two tables the correlation reads (``tables/metrics.csv`` and
``tables/models/results.tsv``, with the causal-LM tables when the run wrote them) beside
the config it ran; pooling checks that the pieces belong to one study and do not overlap,
then runs the workflow's own correlation analysis
(:func:`~tokstudy.analyses.correlation.run.correlation_analysis`) on their union, so the
pooled tables are those one run of the whole study would write."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from tokstudy.analyses.correlation.run import OUTPUT_FILES, Correlations, correlation_analysis
from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.models.run_flags import run_keys

#: a piece's tables: its name → the study file it copies (relative to ``results_dir``)
PIECE_TABLES = {"metrics.csv": "tables/metrics.csv", "results.tsv": "tables/models/results.tsv"}
#: tables a piece keeps when its run wrote them: the causal-LM runs' scale (parameters,
#: training tokens, flags) and, with several scales, their agreement
PIECE_OPTIONAL_TABLES = {
    name: f"tables/models/{name}" for name in ("clm.tsv", "clm_scales.tsv", "clm_scales.md")
}
#: the config a piece ran and what is known of the run (commit, machine, times)
PIECE_CONFIG = "config.yaml"
PIECE_FACTS = "piece.json"
#: the keys a piece may narrow or place elsewhere: the rest of its config is the study's
NARROWABLE = (
    ("results_dir",),
    ("data_root",),
    ("languages",),
    ("models", "languages"),
    ("models", "seeds"),
)
#: the columns naming one intrinsic value in ``metrics.csv``
METRIC_KEYS = ["language", "tokenizer", "vocab_size", "split", "metric"]
#: the rule's outputs besides :data:`OUTPUT_FILES`, as :func:`pool_pieces` names them
EXTRA_OUTPUTS = {
    "png": "correlation.png",
    "cells": "correlation_cells.csv",
    "cells_json": "correlation_cells.json",
    "sensitivity_csv": "correlation_sensitivity.csv",
    "sensitivity_markdown": "correlation_sensitivity.md",
}


def narrowed_config(
    study: Mapping[str, Any],
    languages: Sequence[str],
    seeds: Sequence[int],
    results_dir: str,
    base: Path | None = None,
) -> dict[str, Any]:
    """The config of one piece of ``study``: its ``languages`` (the study's settings of
    each) and model ``seeds``, into its own ``results_dir``; a language or seed the study
    does not have is a one-line error. With ``base`` (the folder the study's relative
    paths are read from), a relative ``data_root`` is written as the absolute path it
    means there, so that the piece runs from any folder (a worktree, another checkout)."""
    config = json.loads(json.dumps(study))
    models = config.get("models")
    if not isinstance(models, dict):
        raise TokstudyError("the study has no models: section to run in pieces")
    unknown = [language for language in languages if language not in config.get("languages", {})]
    if unknown or not languages:
        raise TokstudyError(
            f"languages {', '.join(unknown) or '(none)'}: not languages of the study "
            f"({', '.join(config.get('languages', {}))})"
        )
    study_seeds = models.get("seeds", [0])
    if not seeds or any(seed not in study_seeds for seed in seeds):
        raise TokstudyError(
            f"seeds {', '.join(map(str, seeds)) or '(none)'}: the study's seeds are "
            f"{', '.join(map(str, study_seeds))}"
        )
    config["languages"] = {language: config["languages"][language] for language in languages}
    models["languages"] = [
        language for language in models.get("languages", languages) if language in languages
    ]
    models["seeds"] = list(seeds)
    config["results_dir"] = results_dir
    if base is not None and "data_root" in config:
        config["data_root"] = os.path.normpath(Path(base) / config["data_root"])
    return config


def export_piece(
    results_dir: Path, config: Mapping[str, Any], out: Path, facts: Mapping[str, Any]
) -> None:
    """Copy a finished piece's tables (:data:`PIECE_TABLES`, and those of
    :data:`PIECE_OPTIONAL_TABLES` its run wrote) from ``results_dir`` into the new folder
    ``out``, with the ``config`` it ran and ``facts`` about the run; a missing table (the
    piece has not finished) is a one-line error and leaves nothing behind."""
    out = Path(out)
    if out.exists():
        raise TokstudyError(f"{out}: exists; a piece is exported into a new folder")
    sources = {name: Path(results_dir) / table for name, table in PIECE_TABLES.items()}
    for source in sources.values():
        if not source.is_file():
            raise TokstudyError(f"{source}: missing; has the piece run to its end?")
    for name, table in PIECE_OPTIONAL_TABLES.items():
        if (Path(results_dir) / table).is_file():
            sources[name] = Path(results_dir) / table
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}-") as folder:
        staged = Path(folder) / out.name
        staged.mkdir()
        for name, source in sources.items():
            shutil.copyfile(source, staged / name)
        (staged / PIECE_CONFIG).write_text(
            yaml.safe_dump(dict(config), sort_keys=False), encoding="utf-8"
        )
        (staged / PIECE_FACTS).write_text(
            json.dumps(dict(facts), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        staged.rename(out)


def _without_narrowable(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` without the keys a piece may narrow (a deep copy)."""
    copy = json.loads(json.dumps(config))
    for path in NARROWABLE:
        parent = copy
        for key in path[:-1]:
            parent = parent.get(key, {}) if isinstance(parent, dict) else {}
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return copy


def _differing_keys(left: Any, right: Any, prefix: str = "") -> list[str]:
    """The dotted keys where two configs differ (a mapping compared key by key)."""
    if isinstance(left, dict) and isinstance(right, dict):
        return [
            key
            for name in sorted(set(left) | set(right), key=str)
            for key in _differing_keys(left.get(name), right.get(name), f"{prefix}{name}.")
        ]
    return [] if left == right else [prefix.rstrip(".") or "(config)"]


def check_piece_config(piece: Path, piece_config: Any, study: Mapping[str, Any]) -> None:
    """A piece ran the study: its config equals the study's but for :data:`NARROWABLE`."""
    if not isinstance(piece_config, dict):
        raise TokstudyError(f"{piece / PIECE_CONFIG}: not a mapping of config keys")
    differing = _differing_keys(_without_narrowable(piece_config), _without_narrowable(study))
    if differing:
        raise TokstudyError(
            f"{piece}: not a piece of this study: config key(s) {', '.join(differing[:5])} "
            f"differ (a piece may narrow only {', '.join('.'.join(p) for p in NARROWABLE)})"
        )


def _read_table(path: Path, sep: str) -> pd.DataFrame:
    if not path.is_file():
        raise TokstudyError(f"{path}: missing; a piece folder holds {', '.join(PIECE_TABLES)}")
    return pd.read_csv(path, sep=sep, keep_default_na=False, na_values=[""])


def _overlap(frames: Mapping[Path, pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    """The key rows found in more than one piece, with the pieces that hold them."""
    owners = pd.concat(
        [frame[keys].drop_duplicates().assign(piece=str(path)) for path, frame in frames.items()],
        ignore_index=True,
    )
    return owners[owners.duplicated(keys, keep=False)]


def pooled_tables(
    pieces: Sequence[Path], study: Mapping[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The union of the pieces' ``metrics.csv`` and ``results.tsv``, checked: every piece
    ran ``study`` (:func:`check_piece_config`); no run (task, language, tokenizer, size,
    seed) is in two pieces; a tokenizer measured in two pieces has the same metric values
    in both (the same config and data give the same tokenizer); a one-line error
    otherwise."""
    if not pieces:
        raise TokstudyError("no piece to pool")
    metrics, results = {}, {}
    for piece in map(Path, pieces):
        if not (piece / PIECE_CONFIG).is_file():
            raise TokstudyError(f"{piece}: not a piece folder (no {PIECE_CONFIG})")
        config = yaml.safe_load((piece / PIECE_CONFIG).read_text(encoding="utf-8"))
        check_piece_config(piece, config, study)
        metrics[piece] = _read_table(piece / "metrics.csv", ",")
        results[piece] = _read_table(piece / "results.tsv", "\t")
    keys = run_keys(pd.concat(results.values(), ignore_index=True))
    twice = _overlap(results, keys)
    if not twice.empty:
        first = twice.iloc[0]
        run = " ".join(str(first[key]) for key in keys)
        holders = sorted(twice[(twice[keys] == first[keys]).all(axis=1)]["piece"])
        raise TokstudyError(
            f"run {run} is in more than one piece ({', '.join(holders)}): "
            f"{twice.drop_duplicates(keys).shape[0]} run(s) overlap"
        )
    pooled_metrics = pd.concat(metrics.values(), ignore_index=True)
    same = pooled_metrics.drop_duplicates()
    clash = same[same.duplicated(METRIC_KEYS, keep=False)]
    if not clash.empty:
        first = clash.iloc[0]
        values = clash[(clash[METRIC_KEYS] == first[METRIC_KEYS]).all(axis=1)]["value"]
        raise TokstudyError(
            f"metric {' '.join(str(first[key]) for key in METRIC_KEYS)} differs between "
            f"pieces ({', '.join(map(str, values))}): the pieces' tokenizers are not the same"
        )
    return same.reset_index(drop=True), pd.concat(results.values(), ignore_index=True)


def pool_pieces(
    pieces: Sequence[Path],
    study: Mapping[str, Any],
    metric_names: Sequence[str],
    settings: CorrelationSettings,
    families: Mapping[str, str],
    out_dir: Path,
) -> Correlations:
    """The correlation tables of the pooled pieces (:func:`pooled_tables`), written into
    ``out_dir`` under the workflow's file names (``correlation*.{csv,md,png}``) with the
    pooled ``metrics.csv`` and ``results.tsv`` they were computed from."""
    metrics, results = pooled_tables(pieces, study)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".pool-") as folder:
        staged = Path(folder)
        metrics.to_csv(staged / "metrics.csv", index=False)
        results.to_csv(staged / "results.tsv", sep="\t", index=False)
        files = {**OUTPUT_FILES, **EXTRA_OUTPUTS}
        outputs = {name: staged / file for name, file in files.items()}
        result = correlation_analysis(
            staged / "metrics.csv",
            list(metric_names),
            staged / "results.tsv",
            [],
            [],
            {},
            settings,
            outputs,
            families=families,
        )
        for name in (*files.values(), "metrics.csv", "results.tsv"):
            (staged / name).replace(out_dir / name)
    return result
