"""Streaming access to prepared corpora (plain UTF-8, one sentence per line)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path


def iter_lines(path: Path) -> Iterator[str]:
    """Lines of a prepared corpus, without their line ending."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            yield line.rstrip("\n")


def count_lines(path: Path) -> int:
    """Number of lines of a prepared corpus."""
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def batched(items: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive lists of at most ``size`` items: the bounded window metrics work on."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch
