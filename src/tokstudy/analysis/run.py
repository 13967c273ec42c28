"""Workflow steps of the analyses: load tokenizers and text, write CSV and Markdown tables."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from tokstudy.analysis.morphology import alignment_summary, morphological_alignment
from tokstudy.analysis.parity import parity_summary, tokenization_parity
from tokstudy.analysis.segmentation import segmentation_table
from tokstudy.analysis.texts import read_text_lines, word_set
from tokstudy.analysis.ud import find_ud_treebank, treebank_files
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
