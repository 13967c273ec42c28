"""A tiny study on disk for the study-page tests: English and Persian (right to left)
chatterbot text, four tokenizers trained and scored as the workflow does, the page built."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tokstudy.corpora.prepare import CleaningStats, clean_lines
from tokstudy.report.page.build import PageCell, build_study_page
from tokstudy.report.page.recommend import StudyTables
from tokstudy.report.tables import collect
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.workflow.cell_job import evaluate_job
from tokstudy.workflow.corpora.plan import chatterbot_files

LANGUAGES = {"en": "english", "fa": "persian"}
#: (tokenizer, size label, requested size): a word-level BPE, a byte-level BPE (partial
#: UTF-8 tokens in Persian), characters, and WordPiece, which the 20 held-out lines cannot
#: tell apart from the BPE (their intervals overlap)
TOKENIZERS = [
    ("hf_bpe", "300", 300),
    ("hf_bytelevel_bpe", "300", 300),
    ("char", "full", None),
    ("hf_wordpiece", "300", 300),
]
WORDS = {"en": ["computers", "happiness"], "fa": ["کامپیوتر"]}
SAMPLE = 4


def tiny_study(root: Path) -> list[PageCell]:
    """Corpora, tokenizers, metrics and frequency tables of the tiny study under ``root``
    (a results folder); returns the page's cells."""
    cells = []
    for language, folder in LANGUAGES.items():
        lines = list(clean_lines(chatterbot_files(folder), language, "error", CleaningStats()))
        corpus = root / "corpora" / language
        corpus.mkdir(parents=True)
        train, heldout = corpus / "train.txt", corpus / "heldout.txt"
        train.write_text("".join(f"{line}\n" for line in lines[:-20]), encoding="utf-8")
        heldout.write_text("".join(f"{line}\n" for line in lines[-20:]), encoding="utf-8")
        for name, label, size in TOKENIZERS:
            cell = f"{language}/{name}/{label}"
            directory = root / "tokenizers" / cell
            params = {"min_count": 1} if name == "char" else {}
            train_to_directory(name, train, TrainSpec(size, params, label=language), directory)
            frequencies = root / "frequencies" / f"{cell}.tsv"
            (root / "metrics" / cell).parent.mkdir(parents=True, exist_ok=True)
            frequencies.parent.mkdir(parents=True, exist_ok=True)
            evaluate_job(
                directory,
                {"train": train, "heldout": heldout},
                root / "metrics" / f"{cell}.tsv",
                frequencies,
            )
            cells.append(PageCell(language, name, label, "trained", directory, frequencies))
    (root / "tables").mkdir()
    collect(sorted((root / "metrics").glob("*/*/*.tsv"))).to_csv(
        root / "tables" / "metrics.csv", index=False
    )
    return cells


def build_tiny_page(root: Path, cells: list[PageCell], plots: Sequence[Path] = ()) -> Path:
    """The study page of the tiny study (``root/index.html``), showing ``plots``."""
    page = root / "index.html"
    build_study_page(
        cells,
        {language: root / "corpora" / language / "heldout.txt" for language in LANGUAGES},
        WORDS,
        {},
        StudyTables.read(root / "tables" / "metrics.csv", {}),
        list(plots),
        page,
        {language: root / "tables" / f"recommendation_{language}.csv" for language in LANGUAGES},
        seed=42,
        sample_count=SAMPLE,
    )
    return page
