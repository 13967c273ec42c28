"""Line-file I/O: prepared corpora (plain UTF-8, one sentence per line) and any UTF-8 text
file, plain or gzip-compressed."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TypeVar

from tokstudy.errors import TokstudyError

T = TypeVar("T")


def iter_lines(path: Path) -> Iterator[str]:
    """Lines of a prepared corpus, without their line ending."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            yield line.rstrip("\n")


def count_lines(path: Path) -> int:
    """Number of lines of a prepared corpus."""
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items: the bounded window metrics work on."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def iter_text_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 text file (``.gz`` read compressed), without ``\n`` or ``\r\n``.

    Only ``\n`` ends a line, so line-aligned files stay aligned whatever else they hold. A
    missing file or invalid UTF-8 is a :class:`TokstudyError` naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise TokstudyError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
            for line in handle:
                yield line.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise TokstudyError(f"{path}: not valid UTF-8 ({exc.reason})") from exc


def read_text_lines(path: Path, max_lines: int | None = None) -> list[str]:
    """The first ``max_lines`` lines (all when ``None``) of a text file."""
    return list(islice(iter_text_lines(path), max_lines))


def write_text_lines(path: Path, lines: Iterable[str]) -> None:
    """Write lines as a UTF-8 file, one per line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)


def iter_nonblank_lines(path: Path) -> Iterator[str]:
    """Stripped non-blank lines of a text file (see :func:`iter_text_lines`): model text."""
    return (line for raw in iter_text_lines(path) if (line := raw.strip()))


def shard_bounds(path: Path, shards: int) -> list[int]:
    """Byte positions where each of ``shards`` ranges of a plain text file begins (and its
    size, last): the first line start at or after ``k · size / shards``."""
    size = Path(path).stat().st_size
    bounds = [0]
    with open(path, "rb") as handle:
        for k in range(1, shards):
            target = k * size // shards
            handle.seek(max(target - 1, 0))
            if target:
                handle.readline()  # to the end of the line holding byte target - 1
            bounds.append(max(handle.tell(), bounds[-1]))
    return [*bounds, size]


def iter_shard_lines(path: Path, shard: int = 0, shards: int = 1) -> Iterator[str]:
    """The stripped non-blank lines (as :func:`iter_nonblank_lines`) of the ``shard``-th of
    ``shards`` byte ranges of a plain text file (:func:`shard_bounds`): the shards, in
    order, give the file's lines once each."""
    if shards == 1:
        yield from iter_nonblank_lines(path)
        return
    if not 0 <= shard < shards:
        raise TokstudyError(f"{path}: shard {shard} of {shards} does not exist")
    if Path(path).suffix == ".gz":
        raise TokstudyError(f"{path}: a compressed file cannot be read in shards")
    start, stop = shard_bounds(path, shards)[shard : shard + 2]
    with open(path, "rb") as handle:
        handle.seek(start)
        position = start
        while position < stop and (raw := handle.readline()):
            position += len(raw)
            try:
                line = raw.decode("utf-8").rstrip("\r\n").strip()
            except UnicodeDecodeError as exc:
                raise TokstudyError(f"{path}: not valid UTF-8 ({exc.reason})") from exc
            if line:
                yield line


def read_nonblank_lines(path: Path, max_lines: int | None = None) -> list[str]:
    """The first ``max_lines`` stripped non-blank lines (all when ``None``) of a text file."""
    return list(islice(iter_nonblank_lines(path), max_lines))
