"""Corpus preparation: clean raw text and write a seeded train / held-out split.

Cleaning, line by line: line endings (``\\r\\n``, ``\\r``) become ``\\n``, a byte-order mark
is removed, bytes that are not UTF-8 and NUL bytes are an error naming the file and line
(or are replaced by U+FFFD when ``on_invalid_utf8: replace``), the line is put in Unicode
normal form ``normalize`` (``none``, ``nfc`` or ``nfkc``: so every tokenizer is trained and
scored on the same text, whatever normalisation its library would apply), leading and
trailing whitespace is stripped, empty lines are dropped, and a line longer than ``max_line_bytes``
UTF-8 bytes is split at whitespace (at a character boundary where a span has none), so
every tokenizer trains on the same text (SentencePiece skips lines over 4,192 bytes).

Input may be plain or gzip-compressed (recognised by its magic bytes), the YAML dialog
files of the ``chatterbot-corpus`` package, or CoNLL-U files (plain or gzip), whose
``# text =`` sentences are the lines.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import json
import logging
import random
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from tokstudy.corpora.ud import iter_conllu
from tokstudy.corpus_io import write_text_lines
from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"
BOM = "\ufeff"
NUL = "\x00"
#: longest line (UTF-8 bytes) a prepared corpus holds; below SentencePiece's 4,192
MAX_LINE_BYTES = 4096
_LAST_WHITESPACE = re.compile(r"\s+(?=\S*$)")
#: the Unicode normal forms a study may put its corpora in (``none``: the text as it is)
NORMAL_FORMS = ("none", "nfc", "nfkc")


@dataclass
class CleaningStats:
    """What cleaning did to one corpus."""

    lines_read: int = 0
    empty_dropped: int = 0
    invalid_lines_replaced: int = 0
    nul_lines_replaced: int = 0
    long_lines_split: int = 0
    long_line_pieces: int = 0
    normalized_lines: int = 0
    normalized_chars_changed: int = 0
    lines_kept: int = 0


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


def _raw_lines(path: Path) -> Iterator[bytes]:
    """Physical lines of a text file, any of ``\\n``, ``\\r\\n`` or ``\\r`` ending a line."""
    with _open_binary(path) as handle:
        for raw in handle:
            yield from raw.splitlines()


def _chatterbot_lines(path: Path) -> Iterator[bytes]:
    """Utterances of a ``chatterbot-corpus`` YAML dialog file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for conversation in data.get("conversations", []):
        for utterance in conversation:
            yield from str(utterance).encode("utf-8").split(b"\n")


def _conllu_lines(path: Path) -> Iterator[bytes]:
    """The ``# text =`` sentence of each sentence of a CoNLL-U file that has one."""
    for sentence in iter_conllu(path, errors="surrogateescape"):
        if "text" in sentence.metadata:
            yield sentence.metadata["text"].encode("utf-8", errors="surrogateescape")


def is_conllu(path: Path) -> bool:
    """Whether a file name is a CoNLL-U file (``.conllu`` or ``.conllu.gz``)."""
    return path.name.endswith((".conllu", ".conllu.gz"))


def _source_lines(path: Path) -> Iterator[bytes]:
    if path.suffix in {".yml", ".yaml"}:
        return _chatterbot_lines(path)
    return _conllu_lines(path) if is_conllu(path) else _raw_lines(path)


def split_long_line(line: str, max_bytes: int) -> list[str]:
    """``line`` (stripped) in stripped, non-empty pieces of at most ``max_bytes`` UTF-8 bytes.

    A piece ends at the last whitespace that keeps it within the limit, or at a character
    boundary where a span has no whitespace.
    """
    data = line.encode("utf-8")
    pieces = []
    start = 0
    while len(data) - start > max_bytes:
        window = data[start : start + max_bytes + 1].decode("utf-8", errors="ignore")
        space = _LAST_WHITESPACE.search(window)
        if space and space.start() > 0 and len(window[: space.start()].encode()) <= max_bytes:
            piece, consumed = window[: space.start()], window[: space.end()]
        else:
            piece = data[start : start + max_bytes].decode("utf-8", errors="ignore")
            consumed = piece
        start += len(consumed.encode("utf-8"))
        if piece.strip():
            pieces.append(piece.strip())
    rest = data[start:].decode("utf-8").strip()
    return [*pieces, rest] if rest else pieces


def _corpus_name(label: str) -> str:
    return f"corpus of language {label!r}" if label else "corpus"


def _decode(raw: bytes, where: tuple[str, str], on_invalid_utf8: str, stats: CleaningStats) -> str:
    """One raw line as text; invalid UTF-8 or a NUL byte is an error or replaced by U+FFFD.

    ``where`` is (file, place in the file) for the error message.
    """
    file, place = where
    hint = "set on_invalid_utf8: replace to substitute U+FFFD"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if on_invalid_utf8 != "replace":
            raise TokstudyError(
                f"{file}: invalid UTF-8 at {place} (byte {exc.start}); {hint}"
            ) from exc
        line = raw.decode("utf-8", errors="replace")
        stats.invalid_lines_replaced += 1
    if NUL in line:
        if on_invalid_utf8 != "replace":
            raise TokstudyError(f"{file}: NUL byte at {place} (byte {raw.index(0)}); {hint}")
        line = line.replace(NUL, "\ufffd")
        stats.nul_lines_replaced += 1
    return line


def changed_chars(before: str, after: str) -> int:
    """Characters of ``before`` that ``after`` does not keep in place: ``before``'s length
    less the characters of the longest matching blocks (:class:`difflib.SequenceMatcher`)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return len(before) - sum(block.size for block in matcher.get_matching_blocks())


def normalize_line(line: str, form: str, stats: CleaningStats) -> str:
    """``line`` in Unicode normal form ``form`` (``none`` leaves it), counted in ``stats``."""
    if form == "none":
        return line
    if form not in NORMAL_FORMS:
        raise TokstudyError(
            f"config key corpus_defaults.normalize: unknown form {form!r} "
            f"(one of {', '.join(NORMAL_FORMS)})"
        )
    normal = unicodedata.normalize(form.upper(), line)
    if normal != line:
        stats.normalized_lines += 1
        stats.normalized_chars_changed += changed_chars(line, normal)
    return normal


def clean_lines(
    paths: Sequence[Path],
    label: str,
    on_invalid_utf8: str,
    stats: CleaningStats,
    max_line_bytes: int = MAX_LINE_BYTES,
    normalize: str = "none",
) -> Iterator[str]:
    """Cleaned, non-empty lines of the raw source files of one language, in order.

    ``label`` names the language in errors (empty: a corpus given outside a study).
    """
    name = _corpus_name(label)
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise TokstudyError(f"{name}: file not found: {path}")
        unit = "sentence" if is_conllu(path) else "line"
        for number, raw in enumerate(_source_lines(path), start=1):
            stats.lines_read += 1
            where = (f"{name}: {path}", f"{unit} {number}")
            line = _decode(raw, where, on_invalid_utf8, stats).replace(BOM, "")
            line = normalize_line(line, normalize, stats).strip()
            if not line:
                stats.empty_dropped += 1
                continue
            pieces = [line]
            if len(line) > max_line_bytes // 4 and len(line.encode("utf-8")) > max_line_bytes:
                pieces = split_long_line(line, max_line_bytes)
                stats.long_lines_split += 1
                stats.long_line_pieces += len(pieces)
            stats.lines_kept += len(pieces)
            yield from pieces


def check_corpus_file(corpus: Path, name: str) -> None:
    """One-line error, starting with ``name`` (how the message names the corpus, e.g.
    ``--corpus a.txt``), for a corpus given outside a study that is missing, a directory or
    a device (``/dev/zero`` would never end); a regular file or a pipe is read."""
    corpus = Path(corpus)
    if corpus.is_dir():
        raise TokstudyError(f"{name}: is a directory, expected a text file")
    if not corpus.exists():
        raise TokstudyError(f"{name}: no such file")
    if corpus.is_char_device() or corpus.is_block_device() or corpus.is_socket():
        raise TokstudyError(f"{name}: is a device, expected a text file")


def clean_corpus_file(
    corpus: Path,
    destination: Path,
    name: str,
    on_invalid_utf8: str = "error",
    max_line_bytes: int = MAX_LINE_BYTES,
) -> CleaningStats:
    """Write ``corpus`` (a file given outside a study) to ``destination`` cleaned exactly as
    :func:`prepare_corpus` cleans a study's corpus, and return what cleaning did; a corpus
    with no line left is a one-line error (``name``: see :func:`check_corpus_file`)."""
    check_corpus_file(corpus, name)
    stats = CleaningStats()
    write_text_lines(destination, clean_lines([corpus], "", on_invalid_utf8, stats, max_line_bytes))
    if stats.lines_kept == 0:
        raise TokstudyError(f"{name}: no lines after cleaning ({stats.lines_read} read, all empty)")
    return stats


def cleaning_changes(stats: CleaningStats) -> dict[str, int]:
    """What cleaning changed (the non-zero counts but lines read and kept)."""
    return {
        key: value
        for key, value in asdict(stats).items()
        if value and key not in ("lines_read", "lines_kept")
    }


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
    max_line_bytes: int = MAX_LINE_BYTES,
    normalize: str = "none",
    checksums: dict[str, str] | None = None,
    code: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Clean ``sources`` and write a seeded train / held-out split plus a stats JSON file.

    ``checksums`` (path → SHA-256) are verified before a source is read. Memory holds only
    the held-out line numbers, never the corpus. ``code`` (the workflow step and the
    fingerprint of its code: :mod:`tokstudy.workflow.code_fingerprint`) is recorded in the stats.
    """
    for path, expected in sorted((checksums or {}).items()):
        verify_checksum(Path(path), expected, _corpus_name(label))
    counting = CleaningStats()
    cleaning = {"max_line_bytes": max_line_bytes, "normalize": normalize}
    total = sum(1 for _ in clean_lines(sources, label, on_invalid_utf8, counting, **cleaning))
    if max_lines is not None:
        total = min(total, max_lines)
    if total == 0:
        raise TokstudyError(f"{_corpus_name(label)}: empty after cleaning ({sources[0]})")
    if counting.long_lines_split:
        log.warning(
            "%s: split %d lines longer than %d bytes into %d lines (at whitespace)",
            label,
            counting.long_lines_split,
            max_line_bytes,
            counting.long_line_pieces,
        )
    picked = set(random.Random(seed).sample(range(total), heldout_count(total, heldout, label)))
    stats = CleaningStats()
    if counting.normalized_lines:
        log.warning(
            "%s: Unicode normal form %s changed %d lines (%d characters)",
            label,
            normalize.upper(),
            counting.normalized_lines,
            counting.normalized_chars_changed,
        )
    lines = clean_lines(sources, label, on_invalid_utf8, stats, **cleaning)
    with (
        open(train_path, "w", encoding="utf-8") as train,
        open(heldout_path, "w", encoding="utf-8") as held,
    ):
        for index, line in zip(range(total), lines, strict=False):
            (held if index in picked else train).write(line + "\n")
    summary = {
        **asdict(counting),
        "max_line_bytes": max_line_bytes,
        "normalize": normalize,
        "lines_used": total,
        "heldout_lines": len(picked),
        "train_lines": total - len(picked),
        **({"code": code} if code else {}),
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


def verify_checksum(path: Path, expected: str, what: str, source: str | None = None) -> None:
    """Raise a one-line error unless the file's SHA-256 is ``expected``.

    ``source`` (a URL) is named instead of ``path`` when given.
    """
    actual = sha256_of(path)
    if actual != expected.lower():
        raise TokstudyError(
            f"{what}: checksum mismatch for {source or path}: "
            f"expected {expected.lower()}, got {actual}"
        )


def download(url: str, sha256: str, destination: Path, label: str) -> None:
    """Download ``url`` to ``destination`` and verify its SHA-256 checksum.

    A failed request or a wrong checksum is a one-line error naming the URL; nothing is
    left at ``destination`` then.
    """
    import shutil
    import urllib.error
    import urllib.request

    destination = Path(destination)
    log.info("%s: downloading %s to %s", label, url, destination)
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(destination, "wb") as out:
            shutil.copyfileobj(response, out)
        verify_checksum(destination, sha256, _corpus_name(label), source=url)
    except (OSError, TokstudyError) as exc:  # urllib's URLError and HTTPError are OSErrors
        destination.unlink(missing_ok=True)
        if isinstance(exc, TokstudyError):
            raise
        reason = exc if isinstance(exc, urllib.error.HTTPError) else getattr(exc, "reason", exc)
        raise TokstudyError(f"{_corpus_name(label)}: download of {url} failed: {reason}") from exc
