"""The model stage's tables and plot: every run's results, statistics, Markdown, a figure.

Inputs are the per-run files of the workflow (MLM ``mlm.tsv`` and fine-tuning
``metrics.tsv`` / ``predictions.tsv``), each with its key columns (language, tokenizer,
vocab_size, seed). Outputs, in one folder: ``results.tsv`` (every row), and
``seed_summary``, ``wilcoxon`` and (with fine-tuning predictions) ``bootstrap`` as
``.tsv`` and ``.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.figures.layout import panel_grid, save_figure
from tokstudy.files.markdown import markdown_table
from tokstudy.files.write_errors import naming_write_failures
from tokstudy.models.classification_scores import bootstrap_table
from tokstudy.models.clm.scoring import DETAILS_FILE, TRAINING_FACTS
from tokstudy.models.clm_scales import data_starved, scale_agreement_by_flags
from tokstudy.models.config import EvalConfig
from tokstudy.models.run_flags import LOSSY_TOLERANCE, RUN_FACTS, flagged_runs, mark_flagged
from tokstudy.models.task_registry import TASKS
from tokstudy.models.tsv_datasets import write_tsv
from tokstudy.statistics.significance import seed_summary, wilcoxon_table


def read_tables(files: Mapping[Path, Mapping[str, Any]]) -> pd.DataFrame:
    """Concatenate TSV tables, adding each file's key columns (language, tokenizer, seed …)."""
    frames = []
    for path, keys in files.items():
        frame = pd.read_csv(path, sep="\t", keep_default_na=False)
        frames.append(frame.assign(**dict(keys)))
    if not frames:
        raise TokstudyError("read_tables: no result files given")
    return pd.concat(frames, ignore_index=True)


def summarize(
    metrics: pd.DataFrame,
    out_dir: Path,
    *,
    system: str = "tokenizer",
    seed: str = "seed",
    pair_on: Sequence[str] = ("seed",),
    predictions: pd.DataFrame | None = None,
    bootstrap_resamples: int = 1000,
    bootstrap_seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Seed summaries, Wilcoxon tests between systems and bootstrap CIs, as TSV files.

    ``metrics`` has a ``value`` column plus key columns (see :func:`read_tables`).
    ``seed_summary``: mean/std over ``seed`` per group of the other keys. ``wilcoxon``:
    every pair of ``system`` values, paired over the ``pair_on`` columns, per group of
    the remaining keys. ``bootstrap`` (when ``predictions`` with ``gold``/``pred`` and
    key columns are given): CIs per group of its keys.
    """
    out_dir = Path(out_dir)
    keys = [c for c in metrics.columns if c not in ("value", "relative_change")]
    tables = {"seed_summary": seed_summary(metrics, [c for c in keys if c != seed])}
    groups = [c for c in keys if c != system and c not in pair_on]
    wilcoxon = [
        wilcoxon_table(group, system=system, pair_on=pair_on).assign(
            **dict(zip(groups, key, strict=True))
        )
        for key, group in metrics.groupby(groups, sort=True)
    ]
    tables["wilcoxon"] = pd.concat(wilcoxon, ignore_index=True)
    if predictions is not None:
        by = [c for c in predictions.columns if c not in ("gold", "pred")]
        tables["bootstrap"] = bootstrap_table(
            predictions, by, n_resamples=bootstrap_resamples, seed=bootstrap_seed
        )
    for name, table in tables.items():
        write_tsv(table, out_dir / f"{name}.tsv")
    return tables


def collect_results(scores: Mapping[Path, Mapping[str, Any]]) -> pd.DataFrame:
    """One table of every task's score files (each file's keys, ``task`` among them, as
    columns; ``scale`` where a task has scales, empty for the others)."""
    table = read_tables(scores)
    keys = ["task", "language", "tokenizer", "vocab_size", "seed", "level", "metric"]
    if "scale" in table:
        table["scale"] = table["scale"].fillna("")
        keys.insert(1, "scale")
    return table[[*keys, "value", "relative_change"]].sort_values(keys, ignore_index=True)


#: training facts of a causal-LM run shown beside its scores (from ``clm.json``)
CLM_TRAINING_COLUMNS = TRAINING_FACTS


def clm_table(clm: Mapping[Path, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per causal-LM run: its training budget, held-out bits per byte beside the
    unigram baseline's, the ``undertrained`` flag, and bits per byte at each noise level."""
    rows = []
    for path, keys in clm.items():
        details = json.loads(Path(path).with_name(DETAILS_FILE).read_text(encoding="utf-8"))
        training = details["training"]
        clean = details["levels"]["0"]
        row = {key: value for key, value in keys.items() if key != "task"}
        row |= {column: training[column] for column in CLM_TRAINING_COLUMNS}
        row |= {
            "bits_per_byte": clean["bits_per_byte"],
            "bits_per_byte_low": clean["bits_per_byte_low"],
            "bits_per_byte_high": clean["bits_per_byte_high"],
            "unigram_bits_per_byte": clean["unigram_bits_per_byte"],
            "below_unigram": clean["below_unigram"],
            "undertrained": bool(clean["undertrained"]),
            "roundtrip": clean["roundtrip"],
            # details written before 2026-11-28 have no lossy_bytes: there the share of lines
            # lost stands in (any line of a few hundred is above the tolerance, as before)
            "lossy_bytes": clean.get("lossy_bytes", np.nan),
            "lossy": clean.get("lossy_bytes", 1 - clean["roundtrip"]) > LOSSY_TOLERANCE,
            "unk_tokens": clean["unk_tokens"],
        }
        for level in sorted(map(int, details["levels"]))[1:]:
            row[f"bits_per_byte_noise{level}"] = details["levels"][str(level)]["bits_per_byte"]
        rows.append(row)
    keys = ["scale", "language", "tokenizer", "vocab_size", "seed"]
    table = pd.DataFrame(rows).sort_values(keys, ignore_index=True)
    return table.assign(data_starved=data_starved(table))


def write_markdown(frame: pd.DataFrame, path: Path, title: str) -> None:
    """``frame`` as a Markdown table under a heading."""
    body = markdown_table(frame)
    with naming_write_failures(path, "the table"):
        Path(path).write_text(f"## {title}\n\n{body}\n", encoding="utf-8")


def plot_noise(results: pd.DataFrame, outputs: Sequence[Path]) -> None:
    """One panel per (task, metric, language): mean over seeds against noise level per tokenizer.

    Level 0 is the clean text, so each line shows how a tokenizer's model degrades.
    """
    plotted = [
        not TASKS[task].plotted or metric in TASKS[task].plotted
        for task, metric in zip(results["task"], results["metric"], strict=True)
    ]
    shown = results[plotted]
    panels = sorted(shown.groupby(["task", "metric", "language"]).groups)
    figure, axes = panel_grid(max(1, len(panels)))
    for axis, (task, metric, language) in zip(axes.flat, panels, strict=False):
        rows = shown[
            (shown["task"] == task) & (shown["metric"] == metric) & (shown["language"] == language)
        ]
        means = rows.groupby(["tokenizer", "vocab_size", "level"])["value"].mean().reset_index()
        for (tokenizer, size), line in means.groupby(["tokenizer", "vocab_size"], sort=True):
            axis.plot(line["level"], line["value"], "o-", label=f"{tokenizer} {size}", markersize=3)
        axis.set_title(f"{task} {language}: {metric}")
        axis.set_xlabel("noised words (%), 0 = clean")
        axis.set_ylabel(metric)
        axis.legend(fontsize="small")
    figure.suptitle("Model metrics, clean and noised (mean over seeds)")
    save_figure(figure, outputs)


def summarize_models(
    scores: Mapping[Path, Mapping[str, Any]],
    predictions: Mapping[Path, Mapping[str, Any]],
    clm: Mapping[Path, Mapping[str, Any]],
    out_dir: Path,
    plots: Sequence[Path],
    evaluation: EvalConfig,
) -> dict[str, pd.DataFrame]:
    """Write the results table of every task's ``scores`` files, the statistics (TSV +
    Markdown), the causal-LM table (of the ``clm`` runs' files) and the noise plot."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = collect_results(scores)
    with naming_write_failures(out_dir / "results.tsv", "the table"):
        results.to_csv(out_dir / "results.tsv", sep="\t", index=False)
    flagged = flagged_runs(results)
    tables = summarize(
        results[~results["metric"].isin(RUN_FACTS)],
        out_dir,
        pair_on=("seed",),
        predictions=read_tables(predictions) if predictions else None,
        bootstrap_resamples=evaluation.bootstrap_resamples,
        bootstrap_seed=evaluation.bootstrap_seed,
    )
    tables["seed_summary"] = mark_flagged(tables["seed_summary"], flagged)
    write_tsv(tables["seed_summary"], out_dir / "seed_summary.tsv")
    tables["flagged_runs"] = flagged
    write_tsv(flagged, out_dir / "flagged_runs.tsv")
    if clm:
        tables["clm"] = clm_table(clm)
        write_tsv(tables["clm"], out_dir / "clm.tsv")
        if tables["clm"]["scale"].nunique() > 1:
            tables["clm_scales"] = scale_agreement_by_flags(
                tables["clm"],
                bootstrap_resamples=evaluation.bootstrap_resamples,
                bootstrap_seed=evaluation.bootstrap_seed,
            )
            write_tsv(tables["clm_scales"], out_dir / "clm_scales.tsv")
    titles = {
        "seed_summary": "Mean and standard deviation over seeds (flagged_seeds: seeds whose "
        "run collapsed, stayed undertrained or scored through a lossy tokenizer)",
        "flagged_runs": "Runs that did not learn or were not scored like the others "
        "(collapsed: a fine-tune within one point of the majority class or macro-F1 at most "
        "1 / labels; undertrained: less than the margin below the unigram baseline; lossy: "
        f"a tokenizer that does not give more than {LOSSY_TOLERANCE:.1%} of the held-out "
        "bytes back); left out of the "
        "correlation analysis unless analyses.correlation.flagged_runs is keep",
        "wilcoxon": "Wilcoxon signed-rank tests between tokenizers (paired over seeds)",
        "bootstrap": "Bootstrap 95% confidence intervals of fine-tuning test scores",
        "clm": "Causal LM: held-out bits per byte (95% bootstrap interval over lines) beside "
        "the unigram baseline (budget: see the budget column; undertrained: less than the "
        "margin below the baseline; roundtrip: share of held-out lines the tokenizer decodes "
        "back exactly; lossy_bytes: share of the held-out bytes it does not give back, lossy "
        f"above {LOSSY_TOLERANCE:.1%}; data_starved: a larger model that ends with a higher "
        "validation loss than a smaller scale's on the same cell)",
        "clm_scales": "Causal LM: does the tokenizer ranking hold at the larger scale? "
        "(Kendall's tau of the tokenizers' bits per byte within each vocabulary size, "
        "averaged over sizes, its p from relabelling the tokenizers; larger minus smaller "
        "scale, Wilcoxon over the tokenizers; seeds both scales trained; 95% bootstrap "
        "intervals resampling tokenizers with all their cells; Holm-adjusted p within each "
        "flagged_runs set: excluded leaves out undertrained and lossy runs, kept has every "
        "run)",
    }
    for name, table in tables.items():
        write_markdown(table, out_dir / f"{name}.md", titles[name])
    plot_noise(results, plots)
    return tables
