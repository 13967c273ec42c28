"""Shared fixtures: small real corpora that need no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokstudy.corpora import CleaningStats, clean_lines
from tokstudy.study import chatterbot_files

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def write_lines(path: Path, lines: list[str]) -> Path:
    """Write lines as a prepared corpus."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def english_lines() -> list[str]:
    """The English dialog lines of the installed chatterbot-corpus package."""
    return list(clean_lines(chatterbot_files("english"), "en", "error", CleaningStats()))


@pytest.fixture(scope="session")
def english_corpus(tmp_path_factory: pytest.TempPathFactory, english_lines: list[str]) -> Path:
    """A prepared English corpus file of about 3,000 lines."""
    return write_lines(tmp_path_factory.mktemp("corpus") / "en.txt", english_lines[:3000])
