"""The robustness analysis on files: the sentences of each source and language, the rows
of every tokenizer, the table and the heat map."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.analyses.heatmap import plot_heatmap
from tokstudy.analyses.robustness.measure import perturb_all, robustness_rows
from tokstudy.analyses.table_files import write_table
from tokstudy.corpora.ud import sentence_texts
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def texts(
    pud: Mapping[str, Path], heldout: Mapping[str, Path], sentences: int
) -> dict[tuple[str, str], list[str]]:
    """``(source, language)`` → the first ``sentences`` PUD sentences (by ``sent_id``) or
    non-blank held-out lines; what is left out is logged."""
    found = {}
    for language, path in sorted(pud.items()):
        by_id = sentence_texts(Path(path))
        found[("pud", language)] = [by_id[k] for k in sorted(by_id)][:sentences]
    for language, path in sorted(heldout.items()):
        found[("heldout", language)] = read_nonblank_lines(Path(path), sentences)
    for (source, language), lines in found.items():
        log.info("%s %s: %d sentences (at most %d taken)", source, language, len(lines), sentences)
    return found


def write_robustness(
    pud: Mapping[str, Path],
    heldout: Mapping[str, Path],
    tokenizers: Sequence[Mapping[str, Any]],
    perturbations: Sequence[str],
    settings: Mapping[str, Any],
    csv: Path,
    markdown: Path,
) -> pd.DataFrame:
    """One row per tokenizer × source × language it covers × perturbation."""
    corpus = texts(pud, heldout, settings["sentences"])
    perturbed = {
        key: perturb_all(lines, perturbations, settings["seed"], settings["rate"])
        for key, lines in corpus.items()
    }
    rows = []
    for entry in tokenizers:
        tokenizer = load_tokenizer(Path(entry["directory"]))
        for (source, language), lines in corpus.items():
            if language not in entry["languages"] or not lines:
                continue
            for row in robustness_rows(tokenizer, lines, perturbed[(source, language)]):
                rows.append(
                    {
                        "tokenizer": entry["label"],
                        "kind": entry["kind"],
                        "source": source,
                        "language": language,
                        **row,
                    }
                )
        log.info("%s: done", entry["label"])
    frame = pd.DataFrame(rows)
    write_table(frame, csv, markdown, "Robustness of segmentation to perturbed text")
    return frame


def plot_robustness(table: Path, outputs: Sequence[Path]) -> None:
    """Heat map: perturbations × tokenizers, the mean token inflation over languages."""
    frame = pd.read_csv(table)
    plot_heatmap(
        frame,
        "perturbation",
        "tokenizer",
        "inflation",
        "Token-count inflation under perturbation (mean over languages)",
        outputs,
    )
