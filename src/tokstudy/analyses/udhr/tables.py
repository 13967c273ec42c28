"""The workflow step of the UDHR parity: who takes part, the tables and the record of what
was left out (rule ``tokenization_parity_udhr``)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.analyses.udhr.parity import (
    describe_translations,
    udhr_fairness,
    udhr_premiums,
    udhr_scripts,
)
from tokstudy.corpora.udhr import (
    dominant_script,
    read_index,
    read_translations,
    udhr_coverage,
)
from tokstudy.errors import TokstudyError
from tokstudy.files.markdown import markdown_table
from tokstudy.tokenizers.base import set_library_threads
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)

#: columns of the translations joined to every row of the premium table
TRANSLATION_COLUMNS = (
    "iso6393",
    "name",
    "script",
    "script_share",
    "direction",
    "latitude",
    "longitude",
)
VARIETIES_NOTE = (
    "One value per ISO 639-3 code: the premiums of its varieties and orthographies "
    "(translations such as cmn_hans and cmn_hant) are averaged before these statistics."
)


def read_udhr_table(path: Path) -> pd.DataFrame:
    """A table this step wrote, codes read as text (the ISO 639-3 code ``nan`` too)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _write(table: pd.DataFrame, csv: Path, markdown: Path, title: str, note: str = "") -> None:
    table.to_csv(csv, index=False)
    body = markdown_table(table)
    text = f"# {title}\n\n{note}\n\n{body}\n" if note else f"# {title}\n\n{body}\n"
    Path(markdown).write_text(text, encoding="utf-8")


def _read_texts(files: Mapping[str, Path], reference: str, record: dict[str, Any]) -> dict:
    """The articles of every translation; one without article text is logged and listed."""
    if reference not in files:
        raise TokstudyError(f"UDHR parity: the reference {reference} is not among the translations")
    texts = read_translations(files)
    for code, articles in texts.items():
        if not articles:
            log.info("%s: no article text in %s; skipped", code, files[code])
            record["empty_translations"][code] = str(files[code])
    if not texts[reference]:
        raise TokstudyError(f"{files[reference]}: the reference {reference} has no article text")
    for code, articles in texts.items():
        missing = sorted(set(texts[reference]) - set(articles))
        if articles and missing:
            log.info("%s: %d reference articles missing, compared on the rest", code, len(missing))
            record["missing_articles"][code] = missing
    return {code: articles for code, articles in texts.items() if articles}


def write_udhr_parity(
    index_file: Path,
    files: Mapping[str, Path],
    reference: str,
    tokenizers: Sequence[Mapping[str, Any]],
    outputs: Mapping[str, Path],
    threads: int = 1,
) -> None:
    """Premiums over the reference on the UDHR translations ``files`` (code → HTML file)
    listed in the folder's ``index_file``, their fairness per tokenizer and median per script.

    ``tokenizers`` are mappings of ``label``, ``kind``, ``directory`` and ``languages``
    (the analysis planners' :class:`tokstudy.workflow.analyses.base.ParityTokenizer`).
    ``outputs`` names ``csv``, ``markdown``, ``fairness_csv``, ``fairness_markdown``,
    ``scripts_csv``, ``scripts_markdown`` and ``json``, which records what was left out:
    translations without article text, articles missing from a translation, tokenizers or
    their languages without a translation, translations no tokenizer covers. Every input is
    read before anything is written. HF tokenizers encode on ``threads`` threads.
    """
    set_library_threads(threads)
    started, cpu = time.perf_counter(), time.process_time()
    index = read_index(Path(index_file).parent)
    record: dict[str, Any] = {
        "reference": reference,
        "index": str(index_file),
        "translations": len(files),
        "empty_translations": {},
        "missing_articles": {},
        "skipped_tokenizers": {},
        "uncovered_translations": [],
    }
    texts = _read_texts(files, reference, record)
    translations = index.loc[sorted(texts)].copy()
    scripts = {
        code: dominant_script("\n".join(articles.values())) for code, articles in texts.items()
    }
    translations["script"] = [scripts[code][0] for code in translations.index]
    translations["script_share"] = [scripts[code][1] for code in translations.index]
    coverage = udhr_coverage(tokenizers, index, sorted(texts), reference, record)
    covered = {code for group in coverage.values() for code in group}
    record["uncovered_translations"] = sorted(set(texts) - covered)
    if record["uncovered_translations"]:
        log.info(
            "%d translations no tokenizer covers, left out: %s",
            len(record["uncovered_translations"]),
            " ".join(record["uncovered_translations"]),
        )
    log.info("read %d translations in %.1f s", len(texts), time.perf_counter() - started)
    directories = sorted({path for group in coverage.values() for path in group.values()})
    loaded = {path: load_tokenizer(path) for path in directories}
    tables = []
    for label, group in coverage.items():
        begun = time.perf_counter()
        by_code = {code: loaded[path] for code, path in group.items()}
        tables.append(udhr_premiums(texts, reference, {label: by_code}))
        log.info("%s: %d translations in %.1f s", label, len(group), time.perf_counter() - begun)
    table = describe_translations(
        pd.concat(tables, ignore_index=True), translations, TRANSLATION_COLUMNS
    )
    kinds = {entry["label"]: entry["kind"] for entry in tokenizers}
    table.insert(1, "kind", table["tokenizer"].map(kinds))
    title = f"Tokenization premium over {reference} (UDHR, articles 1-30)"
    _write(table, outputs["csv"], outputs["markdown"], title)
    _write(
        udhr_fairness(table),
        outputs["fairness_csv"],
        outputs["fairness_markdown"],
        f"Fairness: {title}",
        VARIETIES_NOTE,
    )
    _write(
        udhr_scripts(table),
        outputs["scripts_csv"],
        outputs["scripts_markdown"],
        f"Median premium per script: {title}",
        "Script: the dominant Unicode script of a translation's letters. " + VARIETIES_NOTE,
    )
    log.info(
        "UDHR parity: %.1f s in all, %.1f s of CPU (all threads) on %d thread(s)",
        time.perf_counter() - started,
        time.process_time() - cpu,
        threads,
    )
    Path(outputs["json"]).write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
