"""The multilingual tokenizers on files: write the mixed text and the per-language tables."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from tokstudy.analyses.multilingual.multilingual import (
    fertility_by_language,
    sample_mixed_corpus,
    vocabulary_share,
)
from tokstudy.analyses.table_files import write_table
from tokstudy.files.lines import read_text_lines
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.tokenizers.directory import read_meta
from tokstudy.tokenizers.registry import load_tokenizer

log = logging.getLogger(__name__)


def write_multilingual_corpus(
    corpora: Mapping[str, Path],
    train: Path,
    summary: Path,
    temperature: float,
    seed: int,
    total_lines: int | None,
    languages: Path | None = None,
) -> None:
    """The temperature-sampled mixed training text, its lines per language as CSV and,
    with ``languages``, the language of each of its lines."""
    table = sample_mixed_corpus(
        corpora,
        Path(train),
        temperature,
        seed,
        total_lines,
        Path(languages) if languages else None,
    )
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
    language: a trained tokenizer's size is the one it was asked for (its ``meta.json``);
    a pretrained tokenizer (size label ``pretrained``, none asked for) comes after the
    trained ones, with its own vocabulary size."""
    loaded = {}
    for (tokenizer, _), directory in tokenizer_dirs.items():
        requested = read_meta(Path(directory)).get("requested_vocab_size")
        loaded[tokenizer, requested] = load_tokenizer(Path(directory))
    tables = []
    for (tokenizer, requested), trained in sorted(loaded.items(), key=_trained_first):
        table = measure(trained, texts)
        size = requested if requested is not None else len(trained.vocab)
        table.insert(0, "vocab_size", size)
        table.insert(0, "tokenizer", tokenizer)
        table.insert(0, "kind", "trained" if requested is not None else "pretrained")
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def _trained_first(item: tuple[tuple[str, int | None], Tokenizer]) -> tuple[bool, str, int]:
    (tokenizer, requested), _ = item
    return (requested is None, tokenizer, requested or 0)


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
    write_table(
        shares,
        outputs["share_csv"],
        outputs["share_markdown"],
        "Multilingual tokenizers: vocabulary share per language (train split)",
    )
    fertility = _multilingual_rows(tokenizer_dirs, heldout, fertility_by_language)
    write_table(
        fertility,
        outputs["fertility_csv"],
        outputs["fertility_markdown"],
        "Multilingual tokenizers: fertility per language (held-out split)",
    )
