"""Workflow steps of the analyses: load tokenizers and text, write CSV and Markdown tables."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from tokstudy.analysis.morphology import alignment_summary, morphological_alignment
from tokstudy.analysis.multilingual import (
    fertility_by_language,
    sample_mixed_corpus,
    vocabulary_share,
)
from tokstudy.analysis.parity import parity_summary, tokenization_parity
from tokstudy.analysis.segmentation import segmentation_table, word_set
from tokstudy.analysis.ud import find_ud_treebank, treebank_files
from tokstudy.corpus_io import read_text_lines
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
    """``measure`` for every tokenizer and size, keyed by tokenizer, vocab_size, language."""
    tables = []
    for tokenizer, size in sorted(tokenizer_dirs, key=lambda key: (key[0], int(key[1]))):
        table = measure(load_tokenizer(Path(tokenizer_dirs[(tokenizer, size)])), texts)
        table.insert(0, "vocab_size", int(size))
        table.insert(0, "tokenizer", tokenizer)
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


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
