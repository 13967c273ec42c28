"""The parities on files: read the texts, load the tokenizers, write the tables."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.analyses.parity.parity import (
    fairness_summary,
    parallel_parity,
    parity_summary,
    tokenization_parity,
)
from tokstudy.analyses.table_files import write_table
from tokstudy.corpora.ud import sentence_texts
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_text_lines
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def write_parity(
    reference_text: Path,
    target_text: Path,
    pairs: Mapping[tuple[str, str], tuple[Path, Path]],
    csv: Path,
    markdown: Path,
    reference: str,
    target: str,
) -> None:
    """Tokenization parity target/reference on line-aligned text, per tokenizer and size."""
    reference_lines, target_lines = read_text_lines(reference_text), read_text_lines(target_text)
    rows = []
    for (tokenizer, size), (reference_dir, target_dir) in sorted(pairs.items()):
        table = tokenization_parity(
            load_tokenizer(Path(reference_dir)),
            load_tokenizer(Path(target_dir)),
            reference_lines,
            target_lines,
        )
        rows.append(
            {"tokenizer": tokenizer, "vocab_size": size, **parity_summary(table).iloc[0].to_dict()}
        )
    write_table(pd.DataFrame(rows), csv, markdown, f"Tokenization parity {target}/{reference}")


def _parity_selection(
    tokenizers: Sequence[Mapping[str, Any]], reference: str, record: dict[str, Any]
) -> dict[str, dict[str, Path]]:
    """Label → language → tokenizer directory, for labels covering the reference and another
    language; the others are logged and recorded under ``skipped_tokenizers``."""
    groups: dict[str, dict[str, Path]] = {}
    for entry in tokenizers:
        for language in entry["languages"]:
            groups.setdefault(entry["label"], {})[language] = Path(entry["directory"])
    selected = {}
    for label, directories in groups.items():
        if reference in directories and len(directories) > 1:
            selected[label] = directories
            continue
        reason = f"covers {', '.join(sorted(directories))}: needs {reference} and another language"
        log.info("%s: %s; left out", label, reason)
        record["skipped_tokenizers"][label] = reason
    if not selected:
        raise TokstudyError(f"parity: no tokenizer covers {reference} and another language")
    return selected


def write_parallel_parity(
    corpus_files: Mapping[str, Path],
    reference: str,
    tokenizers: Sequence[Mapping[str, Any]],
    outputs: Mapping[str, Path],
) -> None:
    """Premiums over the reference on a multi-parallel corpus (PUD), and their fairness.

    ``corpus_files`` maps a language to its CoNLL-U file (sentences joined on
    ``# sent_id``); ``tokenizers`` are mappings of ``label``, ``kind``, ``directory`` and
    ``languages`` (the analysis planners'
    :class:`tokstudy.workflow.analyses.base.ParityTokenizer`). ``outputs`` names
    ``csv``, ``markdown``, ``fairness_csv``, ``fairness_markdown`` and ``json``, which
    records what was left out: sentences missing from a language, languages no tokenizer
    covers, tokenizers that miss the reference or cover it alone.
    """
    texts = {lang: sentence_texts(Path(path)) for lang, path in sorted(corpus_files.items())}
    record: dict[str, Any] = {
        "reference": reference,
        "files": {lang: str(path) for lang, path in sorted(corpus_files.items())},
        "sentences": {lang: len(sentences) for lang, sentences in texts.items()},
        "missing_sentences": {},
        "skipped_tokenizers": {},
        "skipped_languages": {},
    }
    for language, sentences in texts.items():
        missing = sorted(set(texts[reference]) - set(sentences))
        if missing:
            log.info("%s: %d reference sentences missing, left out", language, len(missing))
            record["missing_sentences"][language] = missing
    selected = _parity_selection(tokenizers, reference, record)
    for language in sorted(set(texts) - {lang for dirs in selected.values() for lang in dirs}):
        log.info("%s: no tokenizer of the study covers it; left out", language)
        record["skipped_languages"][language] = "no tokenizer of the study covers it"
    loaded = {
        path: load_tokenizer(path)
        for path in sorted({p for d in selected.values() for p in d.values()})
    }
    table = parallel_parity(
        texts,
        reference,
        {
            label: {language: loaded[path] for language, path in sorted(directories.items())}
            for label, directories in selected.items()
        },
    )
    table.insert(1, "kind", table["tokenizer"].map({e["label"]: e["kind"] for e in tokenizers}))
    for row in table.itertuples():
        log.info("%s %s: premium %.3f", row.tokenizer, row.language, row.premium)
    title = f"Tokenization premium over {reference} (multi-parallel corpus)"
    write_table(table, outputs["csv"], outputs["markdown"], title)
    fairness = fairness_summary(table)
    write_table(
        fairness, outputs["fairness_csv"], outputs["fairness_markdown"], f"Fairness: {title}"
    )
    Path(outputs["json"]).write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
