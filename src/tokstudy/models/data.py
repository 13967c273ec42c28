"""Pre-tokenized corpora as arrays on disk, and the batches drawn from them.

A corpus directory holds one flat array per field (``ids``: token ids of every line,
concatenated; optional ``char_spans``: each token's character span in its line;
``word_chars``: CharacterBERT's character ids per word), a ``line_offsets.npy`` array
(line *i* is ``ids[offsets[i]:offsets[i + 1]]``) and ``corpus.json`` describing them.
Tokenizing happens once per tokenizer; every pretraining seed reads the result where it
lies (:class:`~tokstudy.files.disk_array.DiskArray`: what a batch needs, never the whole corpus,
which a memory map's touched pages would become).

Training examples are fixed-length blocks cut from the concatenated stream (as in the
``transformers`` ``run_mlm`` example's ``group_texts``), wrapped in ``[CLS] … [SEP]``.
Which blocks a step uses depends only on ``(seed, step)``, so a resumed run sees the
same batches as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.files.disk_array import DiskArray
from tokstudy.files.lines import batched, iter_shard_lines

log = logging.getLogger(__name__)

META_FILE = "corpus.json"
OFFSETS_FILE = "line_offsets.npy"
#: the lines' token counts while a corpus is written (removed when it is complete)
LENGTHS_SCRATCH = "lengths.scratch"
FORMAT_VERSION = 1


def vocab_fingerprint(vocab: dict[str, int]) -> str:
    """A short hash identifying a token → id mapping."""
    digest = hashlib.sha256()
    for token, index in sorted(vocab.items(), key=lambda item: item[1]):
        digest.update(f"{index}\t{token}\n".encode())
    return digest.hexdigest()[:16]


#: values of a corpus array read at a time by :meth:`TokenCorpus.chunks`
COUNT_CHUNK = 1 << 22


def id_dtype(vocabulary_items: int) -> np.dtype:
    """The smallest unsigned integer type holding every id."""
    return np.dtype(np.uint16 if vocabulary_items <= np.iinfo(np.uint16).max + 1 else np.uint32)


@dataclass
class TokenCorpus:
    """A pre-tokenized corpus on disk (see the module docstring)."""

    directory: Path
    meta: dict[str, Any]
    arrays: dict[str, DiskArray]
    line_offsets: DiskArray

    @property
    def ids(self) -> np.ndarray:
        """Token ids of all lines, concatenated."""
        return self.arrays["ids"]

    @property
    def n_tokens(self) -> int:
        """Number of tokens (units) in the corpus."""
        return int(self.meta["n_tokens"])

    @property
    def n_lines(self) -> int:
        """Number of lines."""
        return len(self.line_offsets) - 1

    def chunks(
        self, name: str = "ids", start: int = 0, stop: int | None = None
    ) -> Iterator[np.ndarray]:
        """Entries ``start … stop-1`` of array ``name``, :data:`COUNT_CHUNK` at a time."""
        stop = self.n_tokens if stop is None else stop
        array = self.arrays[name]
        yield from (array[i : min(i + COUNT_CHUNK, stop)] for i in range(start, stop, COUNT_CHUNK))

    def line(self, index: int) -> np.ndarray:
        """Token ids of line ``index``."""
        return np.asarray(self.ids[self.line_offsets[index] : self.line_offsets[index + 1]])

    @classmethod
    def open(cls, directory: Path, fingerprint: str | None = None) -> TokenCorpus:
        """Open a corpus (its arrays read when indexed); ``fingerprint`` must match the one
        it was written with."""
        directory = Path(directory)
        meta_path = directory / META_FILE
        if not meta_path.is_file():
            raise TokstudyError(f"{directory}: not a pre-tokenized corpus (no {META_FILE})")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise TokstudyError(f"{meta_path}: unsupported corpus format {meta.get('format')}")
        if fingerprint is not None and meta["fingerprint"] != fingerprint:
            raise TokstudyError(
                f"{directory}: corpus was tokenized with a different vocabulary "
                f"({meta['fingerprint']} != {fingerprint}); pre-tokenize it again"
            )
        n_tokens = int(meta["n_tokens"])
        arrays = {
            name: DiskArray(directory / f"{name}.bin", spec["dtype"], (n_tokens, *spec["shape"]))
            for name, spec in meta["arrays"].items()
        }
        offsets = DiskArray.of_npy(directory / OFFSETS_FILE)
        return cls(directory, meta, arrays, offsets)


@dataclass(frozen=True)
class Chunk:
    """Consecutive lines of a corpus being written: ``lengths`` (tokens per line) and
    ``arrays`` (field → the entries of every line, joined; first axis: tokens)."""

    lengths: np.ndarray
    arrays: dict[str, np.ndarray]

    @classmethod
    def of_rows(cls, rows: Sequence[Mapping[str, np.ndarray]], dtypes: Mapping[str, Any]) -> Chunk:
        """The chunk of per-line rows (field → that line's array)."""
        lengths = np.fromiter((len(row["ids"]) for row in rows), np.int64, len(rows))
        arrays = {}
        for name, dtype in dtypes.items():
            parts = [np.asarray(row[name], dtype=dtype) for row in rows if len(row[name])]
            arrays[name] = np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
        return cls(lengths, arrays)


def write_corpus(
    out_dir: Path,
    chunks: Iterable[Chunk],
    dtypes: dict[str, np.dtype],
    meta: dict[str, Any],
) -> TokenCorpus:
    """Write a corpus from :class:`Chunk` s; atomic (temp dir, then rename).

    A chunk is written as it comes (its arrays to the fields' files, its lines' token
    counts to a scratch file that becomes the offsets), so memory holds one chunk whatever
    the corpus's size.
    """
    out_dir = Path(out_dir)
    tmp_dir = _scratch(out_dir)
    shapes: dict[str, list[int]] = {name: [] for name in dtypes}
    lengths_path = tmp_dir / LENGTHS_SCRATCH
    with ExitStack() as files:
        handles = {
            name: files.enter_context((tmp_dir / f"{name}.bin").open("wb")) for name in dtypes
        }
        lengths = files.enter_context(lengths_path.open("wb"))
        for chunk in chunks:
            for name, handle in handles.items():
                array = np.ascontiguousarray(chunk.arrays[name], dtype=dtypes[name])
                if len(array):
                    shapes[name] = list(array.shape[1:])
                    array.tofile(handle)
            np.asarray(chunk.lengths, dtype=np.int64).tofile(lengths)
    n_lines = lengths_path.stat().st_size // np.dtype(np.int64).itemsize
    n_tokens = _offsets_from_lengths(lengths_path, tmp_dir / OFFSETS_FILE, n_lines)
    lengths_path.unlink()
    arrays = {
        name: {"dtype": np.dtype(dtypes[name]).name, "shape": shapes[name]} for name in dtypes
    }
    meta = {"format": FORMAT_VERSION, **meta, "n_tokens": n_tokens, "n_lines": n_lines}
    return _publish(tmp_dir, out_dir, meta | {"arrays": arrays})


def _scratch(out_dir: Path) -> Path:
    """The empty folder a corpus is written into before it replaces ``out_dir``."""
    tmp_dir = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir(parents=True)
    return tmp_dir


def _publish(tmp_dir: Path, out_dir: Path, meta: dict[str, Any]) -> TokenCorpus:
    """Write the record into the written folder and put it in place of ``out_dir``."""
    (tmp_dir / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp_dir, out_dir)
    log.info("wrote %s: %d lines, %d tokens", out_dir, meta["n_lines"], meta["n_tokens"])
    return TokenCorpus.open(out_dir)


def _offsets_from_lengths(lengths: Path, offsets: Path, n_lines: int, start: int = 0) -> int:
    """Write ``line_offsets.npy`` (``start``, then the running sum of the int64 token
    counts of ``lengths``) a block at a time, with file writes (no page of it stays
    mapped); the last offset."""
    header = {"descr": "<i8", "fortran_order": False, "shape": (n_lines + 1,)}
    total = start
    with offsets.open("wb") as out, lengths.open("rb") as handle:
        np.lib.format.write_array_header_1_0(out, header)
        np.array([start], dtype="<i8").tofile(out)
        while len(block := np.fromfile(handle, dtype=np.int64, count=COUNT_CHUNK)):
            (total + np.cumsum(block)).astype("<i8").tofile(out)
            total += int(block.sum())
    return total


def batch_encoder(
    tokenizer: Any, with_char_spans: bool = False
) -> Callable[[list[str]], tuple[list[list[int]], list[Any] | None]]:
    """``lines → (ids per line, character spans per line or None)`` of a ``transformers``
    tokenizer: a fast tokenizer's own Rust batch encode (``encode_batch_fast``, no offsets
    computed, when none are needed and the backend neither truncates nor pads), else the
    tokenizer's call; both give the ids of ``tokenizer(lines, add_special_tokens=False)``."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if tokenizer.is_fast else None
    plain = backend is not None and not (backend.truncation or backend.padding)
    if plain and not with_char_spans:
        return lambda lines: (
            [e.ids for e in backend.encode_batch_fast(lines, add_special_tokens=False)],
            None,
        )

    def call(lines: list[str]) -> tuple[list[list[int]], list[Any] | None]:
        encoded = tokenizer(
            lines,
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
            return_offsets_mapping=with_char_spans,
        )
        return encoded["input_ids"], encoded.get("offset_mapping")

    return call


def pretokenize(
    tokenizer: Any,
    text_path: Path,
    out_dir: Path,
    *,
    with_char_spans: bool = False,
    chunk_lines: int = 2000,
    record: Mapping[str, Any] | None = None,
    shard: tuple[int, int] = (0, 1),
) -> TokenCorpus:
    """Tokenize a text file once into a corpus directory (:class:`TokenCorpus`).

    ``tokenizer`` is a ``transformers`` tokenizer (encoded by :func:`batch_encoder`).
    ``with_char_spans`` also stores each token's character span (needed by whole-word
    masking; fast tokenizers only). ``record``: further fields of the corpus record
    (``corpus.json``). ``shard`` ``(k, n)``: only the lines of the ``k``-th of ``n`` byte
    ranges of the file (:func:`tokstudy.files.lines.iter_shard_lines`; :func:`merge_corpora`
    joins the shards into the corpus of the whole file).
    """
    if with_char_spans and not tokenizer.is_fast:
        raise TokstudyError(
            f"{type(tokenizer).__name__}: whole-word masking needs character offsets, which "
            "only fast (Rust-backed) transformers tokenizers provide"
        )
    dtypes = {"ids": id_dtype(len(tokenizer))}
    if with_char_spans:
        dtypes["char_spans"] = np.dtype(np.int32)
    encode = batch_encoder(tokenizer, with_char_spans)

    def encoded_chunks() -> Iterator[Chunk]:
        done = 0
        for lines in batched(iter_shard_lines(text_path, *shard), chunk_lines):
            ids, spans = encode(lines)
            lengths = np.fromiter(map(len, ids), np.int64, len(ids))
            flat = chain.from_iterable(ids)
            arrays = {"ids": np.fromiter(flat, dtypes["ids"], int(lengths.sum()))}
            if spans is not None:
                pairs = list(chain.from_iterable(spans))
                arrays["char_spans"] = np.array(pairs, dtype=np.int32).reshape(len(pairs), 2)
            done += len(lines)
            if done % (chunk_lines * 50) < chunk_lines:
                log.info("%s: tokenized %d lines", text_path, done)
            yield Chunk(lengths, arrays)

    meta = {
        "source": str(text_path),
        "vocab_size": len(tokenizer),
        "fingerprint": vocab_fingerprint(tokenizer.get_vocab()),
        **(record or {}),
        **({"shard": list(shard)} if shard != (0, 1) else {}),
    }
    return write_corpus(out_dir, encoded_chunks(), dtypes, meta)


def merge_corpora(parts: Sequence[Path], out_dir: Path) -> TokenCorpus:
    """One corpus of the shards ``parts`` (each written by :func:`pretokenize` with
    ``shard=(k, n)``, in order ``k = 0 … n-1``): their arrays and offsets joined, a block at
    a time; atomic. Shards of other vocabularies or fields, or a missing shard, are one line
    naming it."""
    opened = [TokenCorpus.open(part) for part in parts]
    first = opened[0].meta
    same = ("fingerprint", "vocab_size", "arrays", "source")
    for index, part in enumerate(opened):
        if differs := [key for key in same if part.meta.get(key) != first.get(key)]:
            raise TokstudyError(
                f"{part.directory}: not a shard of {opened[0].directory}'s corpus (differs in "
                f"{', '.join(differs)})"
            )
        if (found := part.meta.get("shard", [0, 1])) != [index, len(parts)]:
            raise TokstudyError(
                f"{part.directory}: shard {found[0]} of {found[1]}, expected shard {index} of "
                f"{len(parts)}"
            )
    out_dir = Path(out_dir)
    tmp_dir = _scratch(out_dir)
    for name in first["arrays"]:
        with (tmp_dir / f"{name}.bin").open("wb") as out:
            for part in opened:
                with (part.directory / f"{name}.bin").open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 24)
    lengths_path = tmp_dir / LENGTHS_SCRATCH
    with lengths_path.open("wb") as lengths:
        for part in opened:
            for start in range(0, part.n_lines, COUNT_CHUNK):
                block = np.asarray(part.line_offsets[start : start + COUNT_CHUNK + 1])
                np.diff(block).astype(np.int64).tofile(lengths)
    n_lines = sum(part.n_lines for part in opened)
    n_tokens = _offsets_from_lengths(lengths_path, tmp_dir / OFFSETS_FILE, n_lines)
    lengths_path.unlink()
    meta = {key: value for key, value in first.items() if key != "shard"}
    return _publish(tmp_dir, out_dir, meta | {"n_tokens": n_tokens, "n_lines": n_lines})


class BlockSampler:
    """Start positions of fixed-length blocks for each training step.

    The stream of ``n_units`` tokens is cut into ``n_units // block_len`` blocks; every
    epoch visits them in a fresh order drawn from ``(seed, epoch)``; step ``t`` takes the
    ``batch_size`` blocks after the first ``t * batch_size``.
    """

    def __init__(self, n_units: int, block_len: int, batch_size: int, seed: int) -> None:
        self.n_blocks = n_units // block_len
        if self.n_blocks == 0:
            raise TokstudyError(
                f"corpus too small: {n_units} tokens do not fill one block of {block_len}"
            )
        self.block_len = block_len
        self.batch_size = batch_size
        self.seed = seed
        self._order: Callable[[int], np.ndarray] = lru_cache(maxsize=2)(self._epoch_order)

    def _epoch_order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch]).permutation(self.n_blocks)

    def starts(self, step: int) -> np.ndarray:
        """Token positions where the blocks of ``step`` begin."""
        index = step * self.batch_size + np.arange(self.batch_size)
        epochs, positions = np.divmod(index, self.n_blocks)
        blocks = np.array([self._order(int(e))[p] for e, p in zip(epochs, positions, strict=True)])
        return blocks * self.block_len


def gather_blocks(array: DiskArray, starts: np.ndarray, block_len: int) -> np.ndarray:
    """Rows ``array[s : s + block_len]`` for every start ``s``, stacked (one read each)."""
    return np.stack([array[int(start) : int(start) + block_len] for start in starts])


def with_cls_sep(blocks: np.ndarray, cls_value: Any, sep_value: Any) -> np.ndarray:
    """Blocks (batch, length, ...) framed by a ``[CLS]`` row in front and ``[SEP]`` behind."""
    batch = blocks.shape[0]
    cls = np.broadcast_to(np.asarray(cls_value, dtype=blocks.dtype), (batch, 1, *blocks.shape[2:]))
    sep = np.broadcast_to(np.asarray(sep_value, dtype=blocks.dtype), (batch, 1, *blocks.shape[2:]))
    return np.concatenate([cls, blocks, sep], axis=1)
