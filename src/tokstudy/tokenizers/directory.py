"""A trained tokenizer directory: the adapter's files, ``vocab.tsv`` and ``meta.json``.

``meta.json`` records, under ``files``, the SHA-256 of every other file of the directory
as it was written; :func:`read_meta` verifies them, so a truncated or altered file is one
:class:`~tokstudy.errors.TokstudyError` line naming it. Directories written before the
checksums existed (no ``files`` key) load unverified.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError

META_FILE = "meta.json"
VOCAB_FILE = "vocab.tsv"
CHUNK_BYTES = 1 << 20


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def file_checksums(directory: Path) -> dict[str, str]:
    """``name → sha256`` of every file in ``directory`` but ``meta.json`` and hidden files
    (Snakemake's ``.snakemake_timestamp`` in a reused folder), sorted by name."""
    return {
        path.name: sha256_of(path)
        for path in sorted(Path(directory).iterdir())
        if path.is_file() and path.name != META_FILE and not path.name.startswith(".")
    }


def write_meta(directory: Path, meta: dict[str, Any]) -> None:
    """Write ``meta.json`` with the checksums of the files already in ``directory``."""
    meta = {**meta, "files": file_checksums(directory)}
    text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
    (Path(directory) / META_FILE).write_text(text, encoding="utf-8")


def read_meta(directory: Path) -> dict[str, Any]:
    """``meta.json`` of a tokenizer directory, after checking every recorded checksum."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        raise TokstudyError(f"{directory}: not a tokstudy tokenizer directory (no {META_FILE})")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TokstudyError(f"{path}: corrupt tokenizer metadata ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("tokenizer"), str):
        raise TokstudyError(f"{path}: corrupt tokenizer metadata (no 'tokenizer' name)")
    files = meta.get("files", {})
    if not isinstance(files, dict):
        raise TokstudyError(f"{path}: corrupt tokenizer metadata ('files' is not a mapping)")
    for name, expected in sorted(files.items()):
        file = Path(directory) / name
        if not file.is_file():
            raise TokstudyError(f"{file}: missing (listed in {META_FILE}); retrain the tokenizer")
        if sha256_of(file) != expected:
            raise TokstudyError(
                f"{file}: corrupt (SHA-256 differs from {META_FILE}: truncated or changed "
                "after training); retrain the tokenizer"
            )
    return meta


def write_vocab_tsv(path: Path, vocab: list[str], counts: np.ndarray) -> None:
    """Write ``token<TAB>frequency`` lines in id order (tabs/newlines in tokens escaped)."""
    with open(path, "w", encoding="utf-8") as handle:
        for token, count in zip(vocab, counts, strict=True):
            escaped = token.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            handle.write(f"{escaped}\t{int(count)}\n")
