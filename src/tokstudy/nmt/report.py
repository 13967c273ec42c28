"""Result tables of the NMT study and the qualitative comparison of two systems.

``scores`` frames have one row per run: ``direction``, ``tokenizer``, ``vocab_size``,
``seed`` and the metric columns (``bleu``, ``chrf``). :func:`table1` lays them out as
Table 1 of the HFT paper: one row per direction × tokenizer (size), one column per run,
then the average, the standard deviation over runs and the increment of the average over
the baseline tokenizer's at the same direction and size.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_text_lines
from tokstudy.files.markdown import MISSING, markdown_table
from tokstudy.files.write_errors import naming_write_failures
from tokstudy.nmt.config import REPORT_FILES, TABLE_FORMATS, EvaluationConfig
from tokstudy.nmt.scoring import TRANSLATION_METRICS, paired_bootstrap, sentence_bleu
from tokstudy.statistics.significance import seed_summary

log = logging.getLogger(__name__)

RUN_KEYS = ("direction", "tokenizer", "vocab_size", "seed")
SYSTEM_KEYS = ("direction", "tokenizer", "vocab_size")
DECIMALS = 2


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise TokstudyError(f"{what}: missing column(s) {', '.join(missing)}")


def _check_unique_runs(frame: pd.DataFrame, what: str) -> None:
    duplicated = frame[frame.duplicated(list(RUN_KEYS))]
    if not duplicated.empty:
        first = duplicated.iloc[0]
        raise TokstudyError(
            f"{what}: more than one run for {', '.join(f'{k}={first[k]}' for k in RUN_KEYS)}"
        )


def _system_order(frame: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Rows by direction, baseline first, then tokenizer name and size."""
    return frame.assign(_not_baseline=frame["tokenizer"] != baseline).sort_values(
        ["direction", "_not_baseline", "tokenizer", "vocab_size"], kind="stable"
    )


def table1(scores: pd.DataFrame, metric: str = "bleu", baseline: str = "sp_bpe") -> pd.DataFrame:
    """The paper's Table 1 layout of one metric: runs (by seed), average, std, increment."""
    _check_columns(scores, [*RUN_KEYS, metric], "scores")
    _check_unique_runs(scores, "scores")
    rows = []
    for key, group in scores.groupby(list(SYSTEM_KEYS), sort=True):
        direction, tokenizer, size = key
        values = group.sort_values("seed")[metric].to_numpy(dtype=float)
        row = {"direction": direction, "tokenizer": tokenizer, "vocab_size": size}
        row |= {f"run {i}": value for i, value in enumerate(values, start=1)}
        row["average"] = values.mean()
        row["std"] = values.std(ddof=1) if len(values) > 1 else np.nan
        rows.append(row)
    table = pd.DataFrame(rows)
    averages = table.set_index(["direction", "tokenizer", "vocab_size"])["average"]
    table["increment"] = [
        np.nan
        if row.tokenizer == baseline
        else row.average - averages.get((row.direction, baseline, row.vocab_size), np.nan)
        for row in table.itertuples()
    ]
    table = _system_order(table, baseline)
    table.insert(
        1, "system", [f"{t} ({s})" for t, s in zip(table.tokenizer, table.vocab_size, strict=True)]
    )
    runs = sorted((c for c in table.columns if c.startswith("run ")), key=lambda c: int(c[4:]))
    return table[["direction", "system", *runs, "average", "std", "increment"]].reset_index(
        drop=True
    )


def write_table(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` as CSV, Markdown or LaTeX, by the suffix of ``path``; a write the OS
    refuses is one line naming the file and the reason."""
    path = Path(path)
    with naming_write_failures(path, "the table"):
        _write_table(frame, path)
    return path


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False, float_format=f"%.{DECIMALS}f")
    elif path.suffix == ".md":
        text = markdown_table(frame, floatfmt=f".{DECIMALS}f")
        path.write_text(text + "\n", encoding="utf-8")
    elif path.suffix == ".tex":
        frame.to_latex(path, index=False, float_format=f"%.{DECIMALS}f", na_rep=MISSING)
    else:
        raise TokstudyError(f"{path}: table format must be .csv, .md or .tex")


def seed_summaries(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and number of seeds per system and metric."""
    _check_columns(scores, [*RUN_KEYS, *TRANSLATION_METRICS], "scores")
    long = scores.melt(
        id_vars=list(RUN_KEYS), value_vars=list(TRANSLATION_METRICS), var_name="metric"
    )
    return seed_summary(long, by=[*SYSTEM_KEYS, "metric"])


def significance_table(
    runs: pd.DataFrame,
    references: Mapping[str, Sequence[str]],
    baseline: str = "sp_bpe",
    *,
    samples: int = 1000,
    seed: int = 0,
    level: float = 0.05,
) -> pd.DataFrame:
    """Paired bootstrap of every run against the baseline run of the same direction, size, seed.

    ``runs`` has the run keys and a ``hypotheses`` column (list of strings);
    ``references`` maps a direction to its reference translations.
    """
    _check_columns(runs, [*RUN_KEYS, "hypotheses"], "runs")
    _check_unique_runs(runs, "runs")
    indexed = runs.set_index(list(RUN_KEYS))["hypotheses"]
    rows = []
    for key, hypotheses in sorted(indexed.items(), key=lambda item: item[0]):
        direction, tokenizer, size, run_seed = key
        if tokenizer == baseline:
            continue
        base_key = (direction, baseline, size, run_seed)
        if base_key not in indexed.index:
            log.warning("no %s run for %s: %s not tested", baseline, base_key, tokenizer)
            continue
        for metric in TRANSLATION_METRICS:
            result = paired_bootstrap(
                indexed[base_key],
                hypotheses,
                references[direction],
                metric,
                samples=samples,
                seed=seed,
            )
            rows.append({**dict(zip(RUN_KEYS, key, strict=True)), **asdict(result)})
    table = pd.DataFrame(rows)
    if not table.empty:
        table["significant"] = table["p_value"] < level
    return table


def largest_differences(
    sources: Sequence[str],
    references: Sequence[str],
    system_a: Sequence[str],
    system_b: Sequence[str],
    n: int,
) -> pd.DataFrame:
    """The ``n`` sentences where A beats B most by sentence BLEU, then the ``n`` where B does.

    ``difference`` is BLEU(A) − BLEU(B); ``line`` is the 1-based test line.
    """
    bleu_a, bleu_b = sentence_bleu(system_a, references), sentence_bleu(system_b, references)
    frame = pd.DataFrame(
        {
            "line": np.arange(1, len(references) + 1),
            "source": list(sources),
            "reference": list(references),
            "a": list(system_a),
            "b": list(system_b),
            "bleu_a": bleu_a,
            "bleu_b": bleu_b,
            "difference": bleu_a - bleu_b,
        }
    )
    a_better = frame[frame.difference > 0].sort_values(["difference", "line"], ascending=[0, 1])
    b_better = frame[frame.difference < 0].sort_values(["difference", "line"], ascending=[1, 1])
    return pd.concat([a_better.head(n), b_better.head(n)], ignore_index=True)


def _escape(text: str) -> str:
    """``text`` with Markdown's inline markup characters escaped."""
    for character in "\\`*_[]<>#|":
        text = text.replace(character, "\\" + character)
    return text


def qualitative_markdown(differences: pd.DataFrame, name_a: str, name_b: str, title: str) -> str:
    """Markdown listing of :func:`largest_differences`: source, reference and both outputs."""
    lines = [f"## {title}", ""]
    if differences.empty:
        return "\n".join([*lines, "The two systems' translations have equal sentence BLEU.", ""])
    for row in differences.itertuples():
        winner = name_a if row.difference > 0 else name_b
        lines += [
            f"### Line {row.line}: {abs(row.difference):.1f} sentence BLEU in favour of {winner}",
            "",
            f"- **source:** {_escape(row.source)}",
            f"- **reference:** {_escape(row.reference)}",
            f"- **{name_a}** ({row.bleu_a:.1f}): {_escape(row.a)}",
            f"- **{name_b}** ({row.bleu_b:.1f}): {_escape(row.b)}",
            "",
        ]
    return "\n".join(lines)


def write_report(
    score_files: Sequence[Path], out_dir: Path, config: EvaluationConfig
) -> dict[str, Path]:
    """Table 1 (BLEU and chrF; CSV, Markdown, LaTeX), seed summary, significance, examples.

    Significance: paired bootstrap of each run against the baseline run with the same
    direction, size and seed. Examples: each tokenizer against the baseline on the lowest
    seed both have, per direction and size.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = pd.DataFrame([json.loads(Path(path).read_text("utf-8")) for path in score_files])
    if runs.empty:
        raise TokstudyError("nmt report: no score files given")
    written: dict[str, Path] = {}
    for metric in ("bleu", "chrf"):
        table = table1(runs, metric, config.baseline)
        stem = REPORT_FILES[f"table1_{metric}"]
        for suffix in TABLE_FORMATS:
            written[f"{stem}{suffix}"] = write_table(table, out_dir / f"{stem}{suffix}")
    written["seeds"] = write_table(seed_summaries(runs), out_dir / REPORT_FILES["seeds"])
    references = {
        direction: read_text_lines(group["references"].iloc[0])
        for direction, group in runs.groupby("direction", sort=True)
    }
    runs["hypotheses_path"] = runs["hypotheses"]
    runs["hypotheses"] = [read_text_lines(path) for path in runs["hypotheses_path"]]
    significance = significance_table(
        runs,
        references,
        config.baseline,
        samples=config.bootstrap_samples,
        seed=config.bootstrap_seed,
        level=config.significance_level,
    )
    written["significance"] = out_dir / REPORT_FILES["significance"]
    significance.to_csv(written["significance"], index=False)
    written["qualitative"] = out_dir / REPORT_FILES["qualitative"]
    written["qualitative"].write_text(_qualitative(runs, config), encoding="utf-8")
    return written


def _qualitative(runs: pd.DataFrame, config: EvaluationConfig) -> str:
    sections = ["# Largest sentence-BLEU differences against the baseline", ""]
    for (direction, size), group in runs.groupby(["direction", "vocab_size"], sort=True):
        base = group[group.tokenizer == config.baseline]
        for tokenizer, system in group[group.tokenizer != config.baseline].groupby("tokenizer"):
            common = sorted(set(base.seed) & set(system.seed))
            if not common:
                continue
            a = system[system.seed == common[0]].iloc[0]
            b = base[base.seed == common[0]].iloc[0]
            differences = largest_differences(
                read_text_lines(a["sources"]),
                read_text_lines(a["references"]),
                a["hypotheses"],
                b["hypotheses"],
                config.qualitative_sentences,
            )
            title = f"{direction}, size {size}, seed {common[0]}: {tokenizer} vs {config.baseline}"
            sections.append(qualitative_markdown(differences, tokenizer, config.baseline, title))
    return "\n".join(sections) + "\n"
