"""Corpus preparation: clean raw text and write a seeded train / held-out split.

Cleaning, line by line: line endings (``\\r\\n``, ``\\r``) become ``\\n``, a byte-order mark
is removed, bytes that are not UTF-8 are an error naming the file and line (or are
replaced by U+FFFD when ``on_invalid_utf8: replace``), leading and trailing whitespace is
stripped and empty lines are dropped. Input may be plain or gzip-compressed (recognised by
its magic bytes), the YAML dialog files of the ``chatterbot-corpus`` package, or CoNLL-U
files (plain or gzip), whose ``# text =`` sentences are the lines.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import conllu
import yaml

from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"
BOM = "\ufeff"


@dataclass
class CleaningStats:
    """What cleaning did to one corpus."""

    lines_read: int = 0
    empty_dropped: int = 0
    invalid_lines_replaced: int = 0
    lines_kept: int = 0


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


def _raw_lines(path: Path) -> Iterator[bytes]:
    """Physical lines of a text file, any of ``\\n``, ``\\r\\n`` or ``\\r`` ending a line."""
    with _open_binary(path) as handle:
        for raw in handle:
            yield from raw.rstrip(b"\n").split(b"\r")


def _chatterbot_lines(path: Path) -> Iterator[bytes]:
    """Utterances of a ``chatterbot-corpus`` YAML dialog file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for conversation in data.get("conversations", []):
        for utterance in conversation:
            yield from str(utterance).encode("utf-8").split(b"\n")


def _conllu_lines(path: Path) -> Iterator[bytes]:
    """The ``# text =`` sentence of each sentence of a CoNLL-U file that has one."""
    with _open_binary(path) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8", errors="surrogateescape")
        try:
            for sentence in conllu.parse_incr(text):
                if "text" in sentence.metadata:
                    yield sentence.metadata["text"].encode("utf-8", errors="surrogateescape")
        except conllu.exceptions.ParseException as exc:
            raise TokstudyError(f"{path}: not valid CoNLL-U ({exc})") from exc


def is_conllu(path: Path) -> bool:
    """Whether a file name is a CoNLL-U file (``.conllu`` or ``.conllu.gz``)."""
    return path.name.endswith((".conllu", ".conllu.gz"))


def _source_lines(path: Path) -> Iterator[bytes]:
    if path.suffix in {".yml", ".yaml"}:
        return _chatterbot_lines(path)
    return _conllu_lines(path) if is_conllu(path) else _raw_lines(path)


def clean_lines(
    paths: Sequence[Path], label: str, on_invalid_utf8: str, stats: CleaningStats
) -> Iterator[str]:
    """Cleaned, non-empty lines of the raw source files of one language, in order."""
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise TokstudyError(f"corpus of language {label!r}: file not found: {path}")
        for number, raw in enumerate(_source_lines(path), start=1):
            stats.lines_read += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if on_invalid_utf8 != "replace":
                    raise TokstudyError(
                        f"corpus of language {label!r}: {path}: invalid UTF-8 at "
                        f"{'sentence' if is_conllu(path) else 'line'} {number} "
                        f"(byte {exc.start}); set on_invalid_utf8: replace to substitute U+FFFD"
                    ) from exc
                line = raw.decode("utf-8", errors="replace")
                stats.invalid_lines_replaced += 1
            line = line.replace(BOM, "").strip()
            if not line:
                stats.empty_dropped += 1
                continue
            stats.lines_kept += 1
            yield line


def heldout_count(total: int, heldout: float | int, label: str) -> int:
    """Number of held-out lines: ``heldout`` lines if ≥ 1, else that fraction of ``total``."""
    count = int(heldout) if heldout >= 1 else int(total * heldout)
    if not 0 < count < total:
        raise TokstudyError(
            f"corpus of language {label!r}: heldout={heldout} leaves no train or no held-out "
            f"lines ({total} lines after cleaning)"
        )
    return count


def prepare_corpus(
    sources: Sequence[Path],
    train_path: Path,
    heldout_path: Path,
    stats_path: Path,
    *,
    label: str,
    heldout: float | int,
    seed: int,
    max_lines: int | None = None,
    on_invalid_utf8: str = "error",
) -> dict[str, int]:
    """Clean ``sources`` and write a seeded train / held-out split plus a stats JSON file.

    Memory holds only the held-out line numbers, never the corpus.
    """
    counting = CleaningStats()
    total = sum(1 for _ in clean_lines(sources, label, on_invalid_utf8, counting))
    if max_lines is not None:
        total = min(total, max_lines)
    if total == 0:
        raise TokstudyError(f"corpus of language {label!r}: empty after cleaning ({sources[0]})")
    picked = set(random.Random(seed).sample(range(total), heldout_count(total, heldout, label)))
    stats = CleaningStats()
    lines = clean_lines(sources, label, on_invalid_utf8, stats)
    with (
        open(train_path, "w", encoding="utf-8") as train,
        open(heldout_path, "w", encoding="utf-8") as held,
    ):
        for index, line in zip(range(total), lines, strict=False):
            (held if index in picked else train).write(line + "\n")
    summary = {
        **asdict(counting),
        "lines_used": total,
        "heldout_lines": len(picked),
        "train_lines": total - len(picked),
    }
    Path(stats_path).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", "utf-8")
    log.info("%s: %s", label, summary)
    return summary


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, sha256: str, destination: Path, label: str) -> None:
    """Download ``url`` to ``destination`` and verify its SHA-256 checksum."""
    import shutil
    import urllib.request

    with urllib.request.urlopen(url) as response, open(destination, "wb") as out:
        shutil.copyfileobj(response, out)
    actual = sha256_of(destination)
    if actual != sha256.lower():
        Path(destination).unlink()
        raise TokstudyError(
            f"corpus of language {label!r}: checksum mismatch for {url}: "
            f"expected {sha256}, got {actual}"
        )
