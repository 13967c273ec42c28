"""Where a language's raw text comes from, read as raw lines, shard by shard.

A source is files in one format, or a Hugging Face ``datasets`` dataset:

* ``text``: plain or gzip-compressed text (recognised by its magic bytes), one sentence per
  line; also the YAML dialog files of ``chatterbot-corpus`` (``.yml``) and CoNLL-U
  treebanks (``.conllu``, ``.conllu.gz``: their ``# text =`` sentences);
* ``jsonl``: one JSON object per line (plain or gzip), its ``field`` the text;
* ``parquet``: Parquet files, their string column ``field`` the text, read a batch of
  rows at a time;
* a ``datasets`` dataset: saved with ``save_to_disk`` (``{"disk": folder}``, with
  ``split`` for a ``DatasetDict``), read memory-mapped, or on the Hub
  (``{"hub": name, "config": …, "split": …}``), streamed with
  ``load_dataset(..., streaming=True)``: its ``field`` the text.

A record's text (a document of JSONL, Parquet or a dataset) may hold several lines: it is
split at ``\\n``, ``\\r\\n`` and ``\\r`` as a text file is. Every line comes as UTF-8 bytes
with its place (``line 12``, ``record 3``, ``row 7``), which cleaning decodes and names in
errors (:mod:`tokstudy.corpora.prepare`); :class:`ShardStats` counts what each shard gave.
A shard that is not in its declared format, a Parquet file or dataset without the field, a
record whose field is not text: one line naming the shard and the field.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tokstudy.corpora.ud import iter_conllu
from tokstudy.errors import TokstudyError

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
#: the formats of a file source
FORMATS = ("text", "jsonl", "parquet")
#: rows of a Parquet file or a saved dataset read at a time
BATCH_ROWS = 1024


@dataclass(frozen=True)
class CorpusSource:
    """The raw text of one language: ``files`` in ``format``, or a ``dataset``.

    ``field`` names the text of a JSONL record, a Parquet column or a dataset's column.
    ``dataset``: ``{"disk": folder, "split": name or None}`` or
    ``{"hub": name, "config": name or None, "split": name}``.
    """

    files: tuple[Path, ...] = ()
    format: str = "text"
    field: str = "text"
    dataset: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise TokstudyError(f"corpus format {self.format!r} is not one of {', '.join(FORMATS)}")

    def shards(self) -> list[Shard]:
        """The shards in reading order: each file, or the dataset."""
        if self.dataset is not None:
            return [DatasetShard(self.dataset, self.field)]
        reader = {"text": TextShard, "jsonl": JsonlShard, "parquet": ParquetShard}[self.format]
        return [reader(Path(path), self.field) for path in self.files]


@dataclass
class ShardStats:
    """What one shard gave: its records (lines of a text file, JSON records, rows), the
    UTF-8 bytes of their text, and whether it was read to its end (a leading share stops
    early)."""

    shard: str
    records_read: int = 0
    bytes_read: int = 0
    read_to_end: bool = False


@dataclass
class Shard:
    """One file or dataset of a source; :meth:`lines` reads it."""

    where: Any
    field: str = "text"

    @property
    def name(self) -> str:
        """How errors and ``stats.json`` name the shard."""
        return str(self.where)

    def records(self) -> Iterator[tuple[str, bytes | str | None]]:
        """``(place, text)`` of each record; bytes from a text file."""
        raise NotImplementedError

    def lines(self, stats: ShardStats) -> Iterator[tuple[str, bytes]]:
        """``(place, raw line)`` of every line of the shard, counted in ``stats``."""
        for place, text in self.records():
            stats.records_read += 1
            if text is None:  # a null field: a record without text
                yield place, b""
                continue
            raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
            stats.bytes_read += len(raw)
            if isinstance(text, bytes):  # a line of a text file
                yield place, raw
            else:
                for line in raw.splitlines() or [b""]:
                    yield place, line
        stats.read_to_end = True

    def text_of(self, record: Any, place: str) -> str | None:
        """``record[field]``: one line naming the shard, place and field when it has none,
        or a value that is not text."""
        if not isinstance(record, Mapping) or self.field not in record:
            raise TokstudyError(f"{self.name}: {place} has no field {self.field!r}")
        value = record[self.field]
        if value is not None and not isinstance(value, str):
            raise TokstudyError(
                f"{self.name}: {place}: field {self.field!r} is {type(value).__name__}, not text"
            )
        return value


def open_binary(path: Path):
    """A file opened for reading bytes, decompressed when it starts with gzip's magic."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else open(path, "rb")


def is_conllu(path: Path) -> bool:
    """Whether a file name is a CoNLL-U file (``.conllu`` or ``.conllu.gz``)."""
    return path.name.endswith((".conllu", ".conllu.gz"))


class TextShard(Shard):
    """A text file (plain or gzip), a chatterbot YAML file or a CoNLL-U treebank file."""

    def records(self) -> Iterator[tuple[str, bytes | str | None]]:
        path = Path(self.where)
        if not path.is_file():
            raise TokstudyError(f"file not found: {path}")
        if path.suffix in {".yml", ".yaml"}:
            return self._chatterbot(path)
        return self._conllu(path) if is_conllu(path) else self._lines(path)

    @staticmethod
    def _lines(path: Path) -> Iterator[tuple[str, bytes | str | None]]:
        with open(path, "rb") as probe:
            if probe.read(4) == PARQUET_MAGIC:
                raise TokstudyError(f"{path}: a Parquet file, not text (set format: parquet)")
        number = 0
        with open_binary(path) as handle:
            for raw in handle:  # physical lines: \n, \r\n or \r ends one
                for line in raw.splitlines():
                    number += 1
                    yield f"line {number}", line

    @staticmethod
    def _chatterbot(path: Path) -> Iterator[tuple[str, bytes | str | None]]:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        number = 0
        for conversation in data.get("conversations", []):
            for utterance in conversation:
                for line in str(utterance).encode("utf-8").split(b"\n"):
                    number += 1
                    yield f"line {number}", line

    @staticmethod
    def _conllu(path: Path) -> Iterator[tuple[str, bytes | str | None]]:
        number = 0
        for sentence in iter_conllu(path, errors="surrogateescape"):
            if "text" in sentence.metadata:
                number += 1
                text = sentence.metadata["text"]
                yield f"sentence {number}", text.encode("utf-8", errors="surrogateescape")


class JsonlShard(Shard):
    """JSON Lines (plain or gzip): one object per line, ``field`` its text."""

    def records(self) -> Iterator[tuple[str, bytes | str | None]]:
        path = Path(self.where)
        if not path.is_file():
            raise TokstudyError(f"file not found: {path}")
        with open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                place = f"line {number}"
                try:
                    record = json.loads(raw)
                except (ValueError, UnicodeDecodeError) as exc:
                    raise TokstudyError(
                        f"{path}: {place} is not a JSON object (declared format jsonl): {exc}"
                    ) from None
                yield place, self.text_of(record, place)


class ParquetShard(Shard):
    """A Parquet file, its string column ``field`` the text, read a batch of rows at a time."""

    def records(self) -> Iterator[tuple[str, bytes | str | None]]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(self.where)
        if not path.is_file():
            raise TokstudyError(f"file not found: {path}")
        try:
            parquet = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise TokstudyError(
                f"{path}: not a Parquet file (declared format parquet): {exc}"
            ) from None
        names = parquet.schema_arrow.names
        if self.field not in names:
            raise TokstudyError(
                f"{path}: no column {self.field!r} (columns: {', '.join(names) or 'none'})"
            )
        kind = parquet.schema_arrow.field(self.field).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise TokstudyError(f"{path}: column {self.field!r} is {kind}, not text")
        row = 0
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=[self.field]):
            for text in batch.column(0).to_pylist():
                row += 1
                yield f"row {row}", text


def load_saved_dataset(folder: Path, split: str | None) -> Any:
    """A dataset saved with ``save_to_disk`` (a ``DatasetDict``'s ``split``), memory-mapped;
    a folder that holds none, or a missing split, is one line naming it."""
    import datasets

    folder = Path(folder)
    if not folder.is_dir():
        raise TokstudyError(f"{folder}: no such folder (a dataset saved with save_to_disk)")
    try:
        loaded = datasets.load_from_disk(str(folder))
    except (FileNotFoundError, ValueError) as exc:
        raise TokstudyError(f"{folder}: not a saved datasets dataset ({exc})") from None
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise TokstudyError(
                f"{folder}: a DatasetDict; give its split (one of {', '.join(sorted(loaded))})"
            )
        return loaded[split]
    return loaded


class DatasetShard(Shard):
    """A Hugging Face ``datasets`` dataset: saved (``disk``) or streamed (``hub``)."""

    @property
    def name(self) -> str:
        if "disk" in self.where:
            split = self.where.get("split")
            return f"{self.where['disk']}" + (f" (split {split})" if split else "")
        config = self.where.get("config")
        return (
            f"hub dataset {self.where['hub']}"
            + (f" ({config})" if config else "")
            + (f" split {self.where['split']}")
        )

    def records(self) -> Iterator[tuple[str, bytes | str | None]]:
        if "disk" in self.where:
            dataset = load_saved_dataset(Path(self.where["disk"]), self.where.get("split"))
            if self.field not in dataset.column_names:
                raise TokstudyError(
                    f"{self.name}: no column {self.field!r} "
                    f"(columns: {', '.join(dataset.column_names)})"
                )
            rows: Iterable[Any] = (
                {self.field: text}
                for batch in dataset.select_columns([self.field]).iter(batch_size=BATCH_ROWS)
                for text in batch[self.field]
            )
        else:
            rows = self._streamed()
        for number, record in enumerate(rows, start=1):
            place = f"row {number}"
            yield place, self.text_of(record, place)

    def _streamed(self) -> Iterable[Any]:
        """The Hub dataset as ``load_dataset(..., streaming=True)`` streams it (network)."""
        import datasets

        return datasets.load_dataset(
            self.where["hub"], self.where.get("config"), split=self.where["split"], streaming=True
        )
