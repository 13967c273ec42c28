"""The segmentation table on files: load the tokenizers and the corpus, write the table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tokstudy.analyses.segmentation.segmentation import segmentation_table, word_set
from tokstudy.analyses.table_files import write_table
from tokstudy.files.lines import read_text_lines
from tokstudy.tokenizers.registry import load_tokenizer


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
    write_table(table, csv, markdown, f"Segmentations ({language})")
