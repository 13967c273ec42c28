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
from tokstudy.analyses.morphology.spans import ENCODINGS, IN_CONTEXT
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
    """One row per tokenizer × language it covers × encoding (in context, then alone:
    :data:`tokstudy.analyses.morphology.spans.ENCODINGS`); a language whose treebanks have
    no lemma is skipped and listed in ``notes`` with the words that gave no item, as are
    the study languages no treebank covers (``uncovered``: language → closest codes).
    ``notes`` also gives each language's items that come from compound lemmas."""
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
            "items_from_compound_lemmas": len(items.compounds),
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
            for encoding in ENCODINGS:
                result = score(items_of[language], tokenizer, encoding)
                rows.append(
                    {
                        "tokenizer": entry["label"],
                        "kind": entry["kind"],
                        "language": language,
                        "encoding": encoding,
                        **result,
                    }
                )
                log.info(
                    "%s %s %s: MorphScore %.3f (chance %.3f) on %d of %d items",
                    entry["label"],
                    language,
                    encoding,
                    result["morphscore"],
                    result["morphscore_chance"],
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
    """Heat map: languages × tokenizers, coloured by MorphScore above chance, the words
    encoded in context (an empty cell: no value, or chance 1)."""
    frame = pd.read_csv(table)
    frame = frame[frame["encoding"] == IN_CONTEXT]
    plot_heatmap(
        frame,
        "language",
        "tokenizer",
        "morphscore_corrected",
        "MorphScore above chance (UD lemmas, words in context)",
        outputs,
        cmap="RdBu",
        centre=0.0,
    )
