"""Corpus preparation: clean raw text and write a seeded train / held-out split.

Cleaning, line by line: line endings (``\\r\\n``, ``\\r``) become ``\\n``, a byte-order mark
is removed, bytes that are not UTF-8 and NUL bytes are an error naming the file and line
(or are replaced by U+FFFD when ``on_invalid_utf8: replace``), the line is put in Unicode
normal form ``normalize`` (``none``, ``nfc`` or ``nfkc``: so every tokenizer is trained and
scored on the same text, whatever normalisation its library would apply), leading and
trailing whitespace is stripped, empty lines are dropped, and a line longer than ``max_line_bytes``
UTF-8 bytes is split at whitespace (at a character boundary where a span has none), so
every tokenizer trains on the same text (SentencePiece skips lines over 4,192 bytes).

Input: a :class:`~tokstudy.corpora.sources.CorpusSource` (text, gzip, chatterbot, CoNLL-U,
JSONL or Parquet shards, or a ``datasets`` dataset), or a list of text files.

What is taken (:func:`prepare_corpus`): every cleaned line, or a share capped by
``max_lines`` and ``max_bytes`` (UTF-8 bytes of the taken lines with their newlines):
``take: leading`` keeps the first lines within both caps (reading stops there),
``take: seeded`` a seeded uniform sample of the lines (:class:`SeededSubset`) of
``max_lines`` lines, or of as many lines as ``max_bytes`` holds at the corpus's mean line
length. The held-out lines are a seeded uniform sample of the lines taken. Two passes over
the source (count, then write); memory holds one chunk of the samplers and one shard's
batch, never the corpus.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from tokstudy.corpora.sources import CorpusSource, ShardStats
from tokstudy.corpora.subset import SeededSubset
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import write_text_lines

log = logging.getLogger(__name__)

BOM = "\ufeff"
NUL = "\x00"
#: longest line (UTF-8 bytes) a prepared corpus holds; below SentencePiece's 4,192
MAX_LINE_BYTES = 4096
_LAST_WHITESPACE = re.compile(r"\s+(?=\S*$)")
#: the Unicode normal forms a study may put its corpora in (``none``: the text as it is)
NORMAL_FORMS = ("none", "nfc", "nfkc")
#: how a capped corpus takes its lines (:class:`Take`)
TAKES = ("leading", "seeded")
#: the seed stream of a seeded share, apart from the held-out split's
TAKE_STREAM = 1


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
    shards: list[ShardStats] = field(default_factory=list)


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


def _decode(
    raw: bytes, where: tuple[str, str], on_invalid_utf8: str, stats: CleaningStats, hint: str
) -> str:
    """One raw line as text; invalid UTF-8 or a NUL byte is an error (ending with ``hint``:
    how to replace them) or replaced by U+FFFD.

    ``where`` is (file, place in the file) for the error message.
    """
    file, place = where
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


def as_source(sources: CorpusSource | Sequence[Path]) -> CorpusSource:
    """A source as given, or text files (plain, gzip, chatterbot or CoNLL-U) in order."""
    if isinstance(sources, CorpusSource):
        return sources
    return CorpusSource(files=tuple(Path(path) for path in sources))


def clean_lines(
    sources: CorpusSource | Sequence[Path],
    label: str,
    on_invalid_utf8: str,
    stats: CleaningStats,
    max_line_bytes: int = MAX_LINE_BYTES,
    normalize: str = "none",
    replace_hint: str | None = None,
) -> Iterator[str]:
    """Cleaned, non-empty lines of the raw source of one language, in order
    (``sources``: a :class:`CorpusSource` or text files); ``stats`` counts them and what
    each shard gave (:class:`~tokstudy.corpora.sources.ShardStats`).

    ``label`` names the language in errors (empty: a corpus given outside a study);
    ``replace_hint`` ends the error of invalid UTF-8 (default: the study's config keys).
    """
    name = _corpus_name(label)
    hint = replace_hint or (
        f"set languages.{label}.on_invalid_utf8 (or corpus_defaults.on_invalid_utf8): replace "
        "to substitute U+FFFD"
    )
    for shard in as_source(sources).shards():
        shard_stats = ShardStats(shard.name)
        stats.shards.append(shard_stats)
        raw_lines = shard.lines(shard_stats)
        while True:
            try:
                place, raw = next(raw_lines)
            except StopIteration:
                break
            except TokstudyError as exc:
                raise TokstudyError(f"{name}: {exc}") from exc
            stats.lines_read += 1
            line = _decode(raw, (f"{name}: {shard.name}", place), on_invalid_utf8, stats, hint)
            line = normalize_line(line.replace(BOM, ""), normalize, stats).strip()
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
    normalize: str = "none",
    replace_hint: str | None = None,
) -> CleaningStats:
    """Write ``corpus`` (a file given outside a study) to ``destination`` cleaned exactly as
    :func:`prepare_corpus` cleans a study's corpus (normal form ``normalize``), and return
    what cleaning did; a corpus with no line left is a one-line error (``name``: see
    :func:`check_corpus_file`; ``replace_hint``: see :func:`clean_lines`)."""
    check_corpus_file(corpus, name)
    stats = CleaningStats()
    lines = clean_lines(
        [corpus], "", on_invalid_utf8, stats, max_line_bytes, normalize, replace_hint
    )
    write_text_lines(destination, lines)
    if stats.lines_kept == 0:
        raise TokstudyError(f"{name}: no lines after cleaning ({stats.lines_read} read, all empty)")
    return stats


def cleaning_changes(stats: CleaningStats) -> dict[str, int]:
    """What cleaning changed (the non-zero counts but lines read and kept)."""
    return {
        key: value
        for key, value in asdict(stats).items()
        if value and key not in ("lines_read", "lines_kept", "shards")
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


@dataclass(frozen=True)
class Take:
    """What of the cleaned lines a corpus takes: ``how`` (``leading`` or ``seeded``) within
    ``max_lines`` lines and ``max_bytes`` UTF-8 bytes (with newlines); None: no cap."""

    how: str = "leading"
    max_lines: int | None = None
    max_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.how not in TAKES:
            raise TokstudyError(f"config key take: {self.how!r} is not one of {', '.join(TAKES)}")

    def lines_taken(self, lines: int, size: int) -> int:
        """How many of ``lines`` cleaned lines (``size`` bytes) a seeded share takes."""
        taken = lines if self.max_lines is None else min(lines, self.max_lines)
        if self.max_bytes is not None and size > self.max_bytes:
            taken = min(taken, lines * self.max_bytes // size)
        return taken


def _count_taken(lines: Iterator[str], take: Take) -> tuple[int, int, int]:
    """(cleaned lines read, their bytes, lines taken) of the first pass; a leading share
    stops reading at its caps."""
    seen = size = 0
    for line in lines:
        length = len(line.encode("utf-8")) + 1
        if take.how == "leading" and (
            (take.max_lines is not None and seen == take.max_lines)
            or (take.max_bytes is not None and size + length > take.max_bytes)
        ):
            return seen, size, seen
        seen, size = seen + 1, size + length
    return seen, size, seen if take.how == "leading" else take.lines_taken(seen, size)


def _taken_lines(
    lines: Iterator[str], take: Take, seen: int, used: int, seed: int
) -> Iterator[str]:
    """The ``used`` lines of the second pass that the share takes, in corpus order."""
    if take.how == "seeded" and used < seen:
        members = SeededSubset(seen, used, [seed, TAKE_STREAM], "take: seeded")
        lines = (line for line, member in zip(lines, members, strict=False) if member)
    return islice(lines, used)


def prepare_language(
    files: Sequence[Path],
    settings: Mapping[str, Any],
    train: Path,
    heldout: Path,
    stats: Path,
    language: str,
    code: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The corpus of ``language`` (rule ``prepare_corpus``): its source ``files`` read as
    ``settings["source"]`` says (format, field, dataset), cleaned, taken and split as the
    other ``settings`` say (:func:`prepare_corpus`'s keywords) into ``train``, ``heldout``
    and ``stats``."""
    options = dict(settings)
    source = CorpusSource(files=tuple(files), **options.pop("source"))
    return prepare_corpus(source, train, heldout, stats, label=language, code=code, **options)


def prepare_corpus(
    sources: CorpusSource | Sequence[Path],
    train_path: Path,
    heldout_path: Path,
    stats_path: Path,
    *,
    label: str,
    heldout: float | int,
    seed: int,
    max_lines: int | None = None,
    max_bytes: int | None = None,
    take: str = "leading",
    on_invalid_utf8: str = "error",
    max_line_bytes: int = MAX_LINE_BYTES,
    normalize: str = "none",
    checksums: dict[str, str] | None = None,
    code: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Clean ``sources``, take a share of it and write a seeded train / held-out split plus
    a stats JSON file (the module docstring says what is taken).

    ``checksums`` (path → SHA-256) are verified before a source is read. Memory holds one
    chunk of the samplers, never the corpus; a failure leaves none of the three files.
    ``code`` (the workflow step and the fingerprint of its code:
    :mod:`tokstudy.workflow.code_fingerprint`) is recorded in the stats.
    """
    source = as_source(sources)
    share = Take(take, max_lines, max_bytes)
    for path, expected in sorted((checksums or {}).items()):
        verify_checksum(Path(path), expected, _corpus_name(label))
    counting = CleaningStats()
    cleaning = {"max_line_bytes": max_line_bytes, "normalize": normalize}
    seen, size, used = _count_taken(
        clean_lines(source, label, on_invalid_utf8, counting, **cleaning), share
    )
    if used == 0:
        why = f"max_bytes {max_bytes} holds no line" if seen else "empty after cleaning"
        where = source.shards()[0].name if source.files or source.dataset else "no source"
        raise TokstudyError(f"{_corpus_name(label)}: {why} ({where})")
    _log_cleaning(label, counting, max_line_bytes, normalize)
    picked = SeededSubset(used, heldout_count(used, heldout, label), seed, "heldout")
    lines = clean_lines(source, label, on_invalid_utf8, CleaningStats(), **cleaning)
    sizes = {"train": 0, "heldout": 0}
    outputs = (Path(train_path), Path(heldout_path), Path(stats_path))
    try:
        with (
            open(train_path, "w", encoding="utf-8") as train,
            open(heldout_path, "w", encoding="utf-8") as held,
        ):
            taken = _taken_lines(lines, share, seen, used, seed)
            for line, member in zip(taken, picked, strict=True):
                (held if member else train).write(line + "\n")
                sizes["heldout" if member else "train"] += len(line.encode("utf-8")) + 1
        summary = {
            **asdict(counting),
            "max_line_bytes": max_line_bytes,
            "normalize": normalize,
            "take": share.how,
            "max_lines": max_lines,
            "max_bytes": max_bytes,
            "cleaned_lines_read": seen,
            "cleaned_bytes_read": size,
            "lines_used": used,
            "bytes_used": sizes["train"] + sizes["heldout"],
            "heldout_lines": picked.count,
            "train_lines": used - picked.count,
            **({"code": code} if code else {}),
        }
        Path(stats_path).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", "utf-8")
    except BaseException:
        for path in outputs:
            if path.is_file():
                path.unlink()
        raise
    log.info(
        "%s: took %d of %d cleaned lines read (%s%s%s), %d bytes; %d held out",
        label,
        used,
        seen,
        share.how,
        f", max_lines {max_lines}" if max_lines is not None else "",
        f", max_bytes {max_bytes}" if max_bytes is not None else "",
        summary["bytes_used"],
        picked.count,
    )
    log.info("%s: %s", label, summary)
    return summary


def _log_cleaning(label: str, counting: CleaningStats, max_line_bytes: int, normalize: str):
    """Warn about split long lines and normalised lines of the first pass."""
    if counting.long_lines_split:
        log.warning(
            "%s: split %d lines longer than %d bytes into %d lines (at whitespace)",
            label,
            counting.long_lines_split,
            max_line_bytes,
            counting.long_line_pieces,
        )
    if counting.normalized_lines:
        log.warning(
            "%s: Unicode normal form %s changed %d lines (%d characters)",
            label,
            normalize.upper(),
            counting.normalized_lines,
            counting.normalized_chars_changed,
        )


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
