"""The analyses on files: load tokenizers and text, write CSV and Markdown tables."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.analysis.morphology import alignment_summary, morphological_alignment
from tokstudy.analysis.multilingual import (
    fertility_by_language,
    sample_mixed_corpus,
    vocabulary_share,
)
from tokstudy.analysis.parity import (
    fairness_summary,
    parallel_parity,
    parity_summary,
    tokenization_parity,
)
from tokstudy.analysis.segmentation import segmentation_table, word_set
from tokstudy.analysis.ud import find_ud_treebank, sentence_texts, treebank_files
from tokstudy.corpus_io import read_text_lines
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def _write(table: pd.DataFrame, csv: Path, markdown: Path, title: str) -> None:
    table.to_csv(csv, index=False)
    body = table.to_markdown(index=False, floatfmt=".4g") if len(table) else "(no rows)"
    Path(markdown).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def write_segmentations(
    words: Sequence[str],
    tokenizer_dirs: Mapping[str, Path],
    corpus: Path,
    csv: Path,
    markdown: Path,
    language: str,
) -> None:
    """Side-by-side segmentations of a word list by every tokenizer of one language."""
    tokenizers = {name: load_tokenizer(Path(path)) for name, path in sorted(tokenizer_dirs.items())}
    table = segmentation_table(words, tokenizers, word_set(read_text_lines(corpus)))
    _write(table, csv, markdown, f"Segmentations ({language})")


def write_morphological_alignment(
    ud_root: Path, tokenizer_dirs: Mapping[tuple[str, str, str], Path], csv: Path, markdown: Path
) -> None:
    """Share of inflected UD words whose stem boundary is a token boundary, per job.

    Languages without a UD treebank under ``ud_root`` are skipped with a logged note.
    """
    rows = []
    treebanks: dict[str, Path | None] = {}
    for (language, tokenizer, size), path in sorted(tokenizer_dirs.items()):
        if language not in treebanks:
            treebanks[language] = find_ud_treebank(Path(ud_root), language)
        if treebanks[language] is None:
            continue
        table = morphological_alignment(
            treebank_files(treebanks[language]), load_tokenizer(Path(path))
        )
        summary = alignment_summary(table).iloc[0].to_dict()
        rows.append(
            {
                "language": language,
                "tokenizer": tokenizer,
                "vocab_size": size,
                "treebank": treebanks[language].name,
                **summary,
            }
        )
        log.info(
            "%s %s %s: aligned share %.3f",
            language,
            tokenizer,
            size,
            summary["aligned_share_types"],
        )
    _write(pd.DataFrame(rows), csv, markdown, "Morphological alignment with UD lemmas")


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
    _write(pd.DataFrame(rows), csv, markdown, f"Tokenization parity {target}/{reference}")


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
    ``# sent_id``); ``tokenizers`` are :class:`tokstudy.study.ParityTokenizer` fields as
    mappings. ``outputs`` names ``csv``, ``markdown``, ``fairness_csv``,
    ``fairness_markdown`` and ``json``, which records what was left out: sentences missing
    from a language, languages no tokenizer covers, tokenizers that miss the reference or
    cover it alone.
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
    _write(table, outputs["csv"], outputs["markdown"], title)
    fairness = fairness_summary(table)
    _write(fairness, outputs["fairness_csv"], outputs["fairness_markdown"], f"Fairness: {title}")
    Path(outputs["json"]).write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


def write_multilingual_corpus(
    corpora: Mapping[str, Path],
    output: Path,
    summary: Path,
    temperature: float,
    seed: int,
    total_lines: int | None,
) -> None:
    """The temperature-sampled mixed training text, and its lines per language as CSV."""
    table = sample_mixed_corpus(corpora, Path(output), temperature, seed, total_lines)
    for row in table.itertuples():
        log.info(
            "%s: %d lines (natural share %.3f), probability %.3f, %d sampled",
            row.language,
            row.lines,
            row.natural_share,
            row.probability,
            row.sampled_lines,
        )
    table.to_csv(summary, index=False)


def _multilingual_rows(
    tokenizer_dirs: Mapping[tuple[str, str], Path],
    texts: Mapping[str, Sequence[str]],
    measure: Callable[[Tokenizer, Mapping[str, Sequence[str]]], pd.DataFrame],
) -> pd.DataFrame:
    """``measure`` for every tokenizer and size, keyed by kind, tokenizer, vocab_size,
    language. A pretrained tokenizer (size label ``pretrained``) comes after the trained
    ones, with its own vocabulary size."""
    tables = []
    for tokenizer, size in sorted(tokenizer_dirs, key=_trained_first):
        loaded = load_tokenizer(Path(tokenizer_dirs[(tokenizer, size)]))
        table = measure(loaded, texts)
        trained = size.isdigit()
        table.insert(0, "vocab_size", int(size) if trained else len(loaded.vocab))
        table.insert(0, "tokenizer", tokenizer)
        table.insert(0, "kind", "trained" if trained else "pretrained")
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def _trained_first(key: tuple[str, str]) -> tuple[bool, str, int]:
    tokenizer, size = key
    return (not size.isdigit(), tokenizer, int(size) if size.isdigit() else 0)


def write_multilingual_tables(
    tokenizer_dirs: Mapping[tuple[str, str], Path],
    train_texts: Mapping[str, Path],
    heldout_texts: Mapping[str, Path],
    mix_summary: Path,
    outputs: Mapping[str, Path],
) -> None:
    """Per-language vocabulary share (train split) and fertility (held-out split).

    ``outputs`` names ``share_csv``, ``share_markdown``, ``fertility_csv`` and
    ``fertility_markdown``. The share table also gives each language's lines in the mixed
    training text and their share of it.
    """
    train = {lang: read_text_lines(path) for lang, path in sorted(train_texts.items())}
    heldout = {lang: read_text_lines(path) for lang, path in sorted(heldout_texts.items())}
    mix = pd.read_csv(mix_summary)[["language", "sampled_lines"]]
    mix = mix.rename(columns={"sampled_lines": "training_lines"})
    mix["training_share"] = mix["training_lines"] / mix["training_lines"].sum()
    shares = _multilingual_rows(tokenizer_dirs, train, vocabulary_share)
    shares = shares.merge(mix, on="language", how="left", validate="many_to_one")
    _write(
        shares,
        outputs["share_csv"],
        outputs["share_markdown"],
        "Multilingual tokenizers: vocabulary share per language (train split)",
    )
    fertility = _multilingual_rows(tokenizer_dirs, heldout, fertility_by_language)
    _write(
        fertility,
        outputs["fertility_csv"],
        outputs["fertility_markdown"],
        "Multilingual tokenizers: fertility per language (held-out split)",
    )
