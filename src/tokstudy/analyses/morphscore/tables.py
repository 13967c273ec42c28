"""The MorphScore analysis on files: items per language, scores per tokenizer, the table,
its notes (JSON) and the heat map."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.analyses.heatmap import plot_heatmap
from tokstudy.analyses.morphscore.items import build_items, score
from tokstudy.analyses.table_files import write_table
from tokstudy.corpora.ud import treebank_files
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def write_morphscore(
    treebanks: Mapping[str, Sequence[Path]],
    tokenizers: Sequence[Mapping[str, Any]],
    csv: Path,
    markdown: Path,
    notes: Path,
    uncovered: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """One row per tokenizer × language it covers; a language whose treebanks have no
    lemma is skipped and listed in ``notes`` with the words that gave no item, as are the
    study languages no treebank covers (``uncovered``: language → closest codes)."""
    uncovered = dict(uncovered or {})
    for language, close in sorted(uncovered.items()):
        log.warning("%s: no UD treebank (closest codes: %s)", language, ", ".join(close))
    languages: dict[str, Any] = {}
    items_of = {}
    for language, folders in sorted(treebanks.items()):
        items = build_items(f for folder in folders for f in treebank_files(Path(folder)))
        record = {
            "treebanks": [Path(f).name for f in folders],
            "items": len(items.stems),
            "segmented_words": len(items.morphemes),
            "words_without_item": dict(sorted(items.skipped.items())),
        }
        if not items.lemmas:
            record["skipped"] = "no lemmas in the treebank"
            log.warning("%s (%s): no lemmas; skipped", language, ", ".join(record["treebanks"]))
        else:
            items_of[language] = items
        languages[language] = record
    rows = []
    for entry in tokenizers:
        tokenizer = load_tokenizer(Path(entry["directory"]))
        for language in entry["languages"]:
            if language not in items_of:
                continue
            result = score(items_of[language], tokenizer)
            rows.append(
                {"tokenizer": entry["label"], "kind": entry["kind"], "language": language, **result}
            )
            log.info(
                "%s %s: MorphScore %.3f on %d of %d items",
                entry["label"],
                language,
                result["morphscore"],
                result["scored"],
                result["items"],
            )
    table = pd.DataFrame(rows)
    write_table(table, csv, markdown, "MorphScore-style alignment with UD lemmas")
    Path(notes).write_text(
        json.dumps({"languages": languages, "no_treebank": uncovered}, indent=2, ensure_ascii=False)
    )
    return table


def plot_morphscore(table: Path, outputs: Sequence[Path]) -> None:
    """Heat map: languages × tokenizers, coloured by MorphScore."""
    frame = pd.read_csv(table)
    plot_heatmap(frame, "language", "tokenizer", "morphscore", "MorphScore (UD lemmas)", outputs)
