"""Small text I/O helpers for the analyses: plain or gzip-compressed UTF-8 line files."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from tokstudy.errors import TokstudyError


def iter_text_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 text file (``.gz`` read compressed), without line endings."""
    path = Path(path)
    if not path.is_file():
        raise TokstudyError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                yield line.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise TokstudyError(f"{path}: not valid UTF-8 ({exc.reason})") from exc


def read_text_lines(path: Path, max_lines: int | None = None) -> list[str]:
    """The first ``max_lines`` lines (all when ``None``) of a text file."""
    return list(islice(iter_text_lines(path), max_lines))


def word_set(lines: Iterable[str]) -> frozenset[str]:
    """The whitespace-separated words of some lines."""
    return frozenset(word for line in lines for word in line.split())


def write_text_lines(path: Path, lines: Iterable[str]) -> None:
    """Write lines as a UTF-8 file, one per line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)
