"""What the workflow calls: path-in, files-out functions of the NMT study.

One study is: :func:`split` once per language pair; tokenizers trained on the split's
``train.<lang>`` files (or, for a joint vocabulary, on :func:`joint_training_text`); per
direction, tokenizer, size and seed :func:`tokstudy.nmt.model_jobs.train`,
:func:`tokstudy.nmt.model_jobs.translate_split` (the jobs that need ``torch``) and
:func:`score`; then :func:`report` over all score files. Tokenizer arguments are tokstudy
tokenizer folders (with ``meta.json``); the same folder for source and target means a
joint vocabulary. Directions are written ``src-tgt`` (``en-mr``) over the languages of
the split folder.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.corpus_io import read_text_lines
from tokstudy.errors import TokstudyError
from tokstudy.nmt.config import EvaluationConfig, SplitConfig
from tokstudy.nmt.data import read_parallel, split_corpus, split_file
from tokstudy.nmt.report import (
    largest_differences,
    qualitative_markdown,
    seed_summaries,
    significance_table,
    table1,
    write_table,
)
from tokstudy.nmt.scoring import bleu_on_tokens, corpus_scores, detokenize
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)

#: files written by :func:`report` into its output folder
REPORT_FILES = {
    "table1_bleu": "table1_bleu",
    "table1_chrf": "table1_chrf",
    "seeds": "seed_summary.csv",
    "significance": "significance.csv",
    "qualitative": "qualitative.md",
}
TABLE_FORMATS = (".csv", ".md", ".tex")


def parse_direction(direction: str) -> tuple[str, str]:
    """``"en-mr"`` → ``("en", "mr")``."""
    parts = direction.split("-")
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise TokstudyError(f"direction {direction!r}: expected 'src-tgt', e.g. 'en-mr'")
    return parts[0], parts[1]


def split(
    sources: Sequence[Path], languages: tuple[str, str], out_dir: Path, config: SplitConfig
) -> dict:
    """Clean, deduplicate and split a parallel corpus (one TSV or two aligned files)."""
    return split_corpus(sources, languages, out_dir, config)


def joint_training_text(split_dir: Path, languages: tuple[str, str], out_path: Path) -> Path:
    """Both sides of the split's train pairs in one file: the text of a joint tokenizer."""
    lines = [
        line
        for language in languages
        for line in read_text_lines(split_file(split_dir, "train", language))
    ]
    Path(out_path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return Path(out_path)


def score(
    hypotheses_path: Path,
    split_dir: Path,
    direction: str,
    target_tokenizer_dir: Path,
    out_json: Path,
    *,
    tokenizer: str,
    vocab_size: int,
    seed: int,
    split_name: str = "test",
) -> dict[str, Any]:
    """BLEU and chrF of one run's translations, written to ``out_json`` with the run's keys.

    ``reference_roundtrip_exact`` is the share of references that the target tokenizer
    reproduces exactly (``decode(encode(ref)) == ref``): the ceiling its outputs can reach.
    ``bleu_on_tokens`` is BLEU over token strings, the HFT paper's scoring, for contrast.
    """
    languages = parse_direction(direction)
    pairs = read_parallel(Path(hypotheses_path), split_file(split_dir, split_name, languages[1]))
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [reference for _, reference in pairs]
    target_tokenizer = load_tokenizer(Path(target_tokenizer_dir))
    roundtrip = detokenize(target_tokenizer, target_tokenizer.encode_batch(references))
    result = {
        "direction": direction,
        "tokenizer": tokenizer,
        "vocab_size": vocab_size,
        "seed": seed,
        "split": split_name,
        "sentences": len(references),
        "sources": str(split_file(split_dir, split_name, languages[0])),
        "references": str(split_file(split_dir, split_name, languages[1])),
        "hypotheses": str(hypotheses_path),
        **corpus_scores(hypotheses, references),
        "bleu_on_tokens": bleu_on_tokens(target_tokenizer, hypotheses, references),
        "reference_roundtrip_exact": sum(
            decoded == reference for decoded, reference in zip(roundtrip, references, strict=True)
        )
        / len(references),
    }
    Path(out_json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log.info(
        "%s %s (%d) seed %d: BLEU %.2f, chrF %.2f",
        direction,
        tokenizer,
        vocab_size,
        seed,
        result["bleu"],
        result["chrf"],
    )
    return result


def report(score_files: Sequence[Path], out_dir: Path, config: EvaluationConfig) -> dict[str, Path]:
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
