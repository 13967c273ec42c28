"""Pretrained tokenizers (GPT-4o, Llama, Gemma…): scored next to the trained ones, never trained.

Three source formats (:data:`tokstudy.tokenizers.registry.PRETRAINED_FORMATS`, each a
:class:`Pretrained` class here), detected from the path or forced by config:

- ``tokenizer_json``: an HF ``tokenizer.json`` (or a folder holding one), loaded with
  ``tokenizers``;
- ``sentencepiece``: a SentencePiece ``.model``;
- ``tiktoken``: a tiktoken BPE file (``.tiktoken``: base64 token, rank per line), loaded with
  ``tiktoken``; the pre-tokenization regex is not in the file, so it is taken from the
  tiktoken encoding of the same size (``cl100k_base``, ``o200k_base``…) or from ``pattern``.

:func:`import_pretrained` checks a source (format, optional sha256) once and writes a
tokstudy tokenizer directory: the source file, ``meta.json`` (``kind: pretrained``, format,
vocabulary size, source path, sha256) and ``vocab.tsv`` (frequencies 0: nothing is trained).
Encoding never adds special tokens; literal special-token text is encoded as text.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

import numpy as np
from tokenizers import Tokenizer as HFTokenizer

from tokstudy.corpora.prepare import sha256_of
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.hf_tokenizers import HFTokenizersAdapter
from tokstudy.tokenizers.adapters.sentencepiece import SentencePieceTokenizer
from tokstudy.tokenizers.base import Encoded, Tokenizer, TrainSpec
from tokstudy.tokenizers.byte_symbols import byte_of_symbol, readable_bytes
from tokstudy.tokenizers.directory import META_FILE, VOCAB_FILE, write_vocab_tsv
from tokstudy.tokenizers.registry import PRETRAINED_FORMATS, format_class
from tokstudy.version import __version__

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

KIND = "pretrained"
#: id slots an HF vocabulary leaves empty (gpt-4o has gaps below its special tokens)
HOLE = "<unused id>"


def _scored_only(name: str) -> NoReturn:
    raise TokstudyError(f"{name}: a pretrained tokenizer is scored, not trained or fine-tuned")


class Pretrained(Tokenizer):
    """A pretrained source format: read from its file, scored, never trained.

    A format class puts this first among its bases and is registered in
    :data:`~tokstudy.tokenizers.registry.PRETRAINED_FORMATS`.
    """

    #: the file a pretrained tokenizer directory keeps its source in
    source_file: ClassVar[str]
    #: the file name ending that names the format (:func:`detect_format`)
    suffix: ClassVar[str]

    @classmethod
    def looks_like(cls, head: bytes) -> bool:
        """Whether a file's first bytes suggest this format (a file of no known suffix)."""
        return False

    @classmethod
    @abstractmethod
    def from_source(cls, path: Path, pattern: str | None = None) -> Tokenizer:
        """The tokenizer of a source file (``pattern``: a format's pre-tokenization regex);
        a damaged file is a one-line error naming it."""

    @classmethod
    def load(cls, directory: Path) -> Tokenizer:
        """Load a directory written by :func:`import_pretrained`."""
        meta = json.loads((Path(directory) / META_FILE).read_text(encoding="utf-8"))
        return cls.from_source(Path(directory) / cls.source_file, meta.get("pattern"))

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> NoReturn:
        _scored_only(cls.name)

    def to_transformers(self) -> NoReturn:
        _scored_only(self.name)


class PretrainedHF(Pretrained, HFTokenizersAdapter):
    """Any HF ``tokenizer.json``: ids with no token (gaps) become :data:`HOLE` slots."""

    name = "pretrained_tokenizer_json"
    lossless = True
    source_file = "tokenizer.json"
    suffix = ".json"

    def __init__(self, tokenizer: HFTokenizer) -> None:
        tokenizer.encode_special_tokens = True  # "<|endoftext|>" in text is text
        self._tokenizer = tokenizer
        ids = tokenizer.get_vocab(with_added_tokens=True)
        vocab = [HOLE] * (max(ids.values()) + 1)
        for token, i in ids.items():
            vocab[i] = token
        self._vocab = vocab
        added = tokenizer.get_added_tokens_decoder()
        holes = {i for i, token in enumerate(vocab) if token == HOLE}
        unk = getattr(tokenizer.model, "unk_token", None)
        self._unk_id = tokenizer.token_to_id(unk) if unk else None
        specials = holes | {i for i, t in added.items() if t.special}
        self._special_ids = frozenset(specials - {self._unk_id})
        self._byte_level = str(tokenizer.decoder).startswith("ByteLevel(")

    @classmethod
    def looks_like(cls, head: bytes) -> bool:
        return head.lstrip()[:1] == b"{"

    @classmethod
    def from_source(cls, path: Path, pattern: str | None = None) -> PretrainedHF:
        try:
            return cls(HFTokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise TokstudyError(
                f"{path}: not a valid HF tokenizer.json ({str(exc).splitlines()[0]})"
            ) from exc

    @property
    def unk_id(self) -> int | None:
        return self._unk_id

    @property
    def special_ids(self) -> frozenset[int]:
        return self._special_ids

    def readable_token(self, token: str) -> str:
        """Byte-level tokens (``Ġsaid``) as text, byte-fallback tokens (``<0xE0>``) as hex."""
        if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
            return token[3:5]
        if self._byte_level and all(symbol in byte_of_symbol() for symbol in token):
            return readable_bytes(bytes(byte_of_symbol()[symbol] for symbol in token))
        return token


class PretrainedSentencePiece(Pretrained, SentencePieceTokenizer):
    """Any SentencePiece ``.model``: its control and unused pieces are the special ids."""

    name = "pretrained_sentencepiece"
    source_file = "spm.model"
    suffix = ".model"

    @classmethod
    def looks_like(cls, head: bytes) -> bool:
        return head[:1] == b"\n"  # a serialized ModelProto starts with field 1 (pieces)

    @classmethod
    def from_source(cls, path: Path, pattern: str | None = None) -> PretrainedSentencePiece:
        return cls.from_file(path)

    @property
    def unk_id(self) -> int | None:
        unk = self._processor.unk_id()
        return unk if unk >= 0 else None

    @property
    def special_ids(self) -> frozenset[int]:
        processor = self._processor
        return frozenset(
            i
            for i in range(processor.get_piece_size())
            if processor.is_control(i) or processor.is_unused(i)
        )


#: mergeable ranks of tiktoken's published encodings, to pick a file's regex by its size
TIKTOKEN_SIZES = {
    "cl100k_base": 100256,
    "o200k_base": 199998,
    "p50k_base": 50280,
    "r50k_base": 50256,
}


def _encoding_pattern(encoding: str) -> str:
    """The regex of a tiktoken encoding, read without fetching its BPE file (the
    constructor's loader is replaced by one that returns no ranks)."""
    from unittest import mock

    from tiktoken_ext import openai_public

    with mock.patch.object(openai_public, "load_tiktoken_bpe", return_value={}):
        return openai_public.ENCODING_CONSTRUCTORS[encoding]()["pat_str"]


def tiktoken_pattern(ranks: int, pattern: str | None) -> str:
    """The pre-tokenization regex: ``pattern`` (an encoding name or a regex), else that of
    the tiktoken encoding with ``ranks`` mergeable ranks."""
    if pattern in TIKTOKEN_SIZES:
        return _encoding_pattern(pattern)
    if pattern:
        return pattern
    for encoding, size in TIKTOKEN_SIZES.items():
        if size == ranks:
            return _encoding_pattern(encoding)
    raise TokstudyError(
        f"tiktoken file with {ranks} ranks matches no tiktoken encoding; set pattern: to an "
        f"encoding name ({', '.join(TIKTOKEN_SIZES)}) or a regex"
    )


class PretrainedTiktoken(Pretrained):
    """A tiktoken BPE file; token strings are GPT-2 byte symbols (like HF byte-level BPE)."""

    name = "pretrained_tiktoken"
    lossless = True
    source_file = "tokenizer.tiktoken"
    suffix = ".tiktoken"

    def __init__(self, path: Path, pattern: str | None = None) -> None:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        try:
            ranks = load_tiktoken_bpe(str(path))
        except Exception as exc:  # tiktoken raises ValueError/binascii.Error on bad lines
            raise TokstudyError(f"{path}: not a tiktoken BPE file ({exc})") from exc
        try:
            self.pattern = tiktoken_pattern(len(ranks), pattern)
        except TokstudyError as exc:
            raise TokstudyError(f"{path}: {exc}") from None
        self._encoding: tiktoken.Encoding = tiktoken.Encoding(
            name=Path(path).stem, pat_str=self.pattern, mergeable_ranks=ranks, special_tokens={}
        )
        symbol_of_byte = {byte: symbol for symbol, byte in byte_of_symbol().items()}
        vocab = [HOLE] * (max(ranks.values()) + 1)
        for token, rank in ranks.items():
            vocab[rank] = "".join(symbol_of_byte[b] for b in token)
        self._vocab = vocab
        self._bytes = {rank: token for token, rank in ranks.items()}

    @classmethod
    def looks_like(cls, head: bytes) -> bool:
        first = head.split(b"\n", 1)[0].split()  # a base64 token and its rank
        return len(first) == 2 and first[1].isdigit()

    @classmethod
    def from_source(cls, path: Path, pattern: str | None = None) -> PretrainedTiktoken:
        return cls(path, pattern)

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        return self._encoding.encode_ordinary_batch(list(lines), num_threads=1)

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Ids with tiktoken's character offsets (a token inside a character starts at it)."""
        encoded = []
        for ids in self.encode_batch(lines):
            text, starts = self._encoding.decode_with_offsets(ids)
            ends = [*starts[1:], len(text)]
            encoded.append(Encoded(ids, list(zip(starts, ends, strict=True))))
        return encoded

    def decode(self, ids: Sequence[int]) -> str:
        return self._encoding.decode(list(ids))

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    @property
    def unk_id(self) -> int | None:
        return None

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(i for i, token in enumerate(self._vocab) if token == HOLE)

    def readable_token(self, token: str) -> str:
        return readable_bytes(bytes(byte_of_symbol()[symbol] for symbol in token))

    def save(self, directory: Path) -> NoReturn:
        _scored_only(self.name)


def _sniff(path: Path) -> str | None:
    """The format a file's content suggests, or ``None``."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    return next((fmt for fmt in PRETRAINED_FORMATS if format_class(fmt).looks_like(head)), None)


def detect_format(path: Path, forced: str = "auto") -> tuple[str, Path]:
    """The format of a pretrained tokenizer source and the file to read.

    A folder must hold a ``tokenizer.json``; a file is known by its suffix (``.json``,
    ``.model``, ``.tiktoken``), else by its first bytes. ``forced`` (not ``auto``) wins.
    """
    path = Path(path)
    if path.is_dir():
        path = path / PretrainedHF.source_file
    if not path.is_file():
        raise TokstudyError(f"{path}: no such pretrained tokenizer file")
    if forced != "auto":
        if forced not in PRETRAINED_FORMATS:
            known = ", ".join(PRETRAINED_FORMATS)
            raise TokstudyError(f"{path}: format {forced!r} is not one of {known}")
        return forced, path
    by_suffix = {format_class(fmt).suffix: fmt for fmt in PRETRAINED_FORMATS}
    detected = by_suffix.get(path.suffix) or _sniff(path)
    if detected is None:
        raise TokstudyError(
            f"{path}: neither an HF tokenizer.json, a SentencePiece .model nor a tiktoken BPE "
            "file (set format: to force one)"
        )
    return detected, path


def load_source(path: Path, fmt: str, pattern: str | None = None) -> Tokenizer:
    """Load a pretrained tokenizer file of a known format; damage is a one-line error."""
    return format_class(fmt).from_source(path, pattern)


def check_sha256(path: Path, expected: str | None, label: str) -> str:
    """The file's SHA-256; a mismatch with ``expected`` is a one-line error."""
    actual = sha256_of(path)
    if expected and actual != expected.lower():
        raise TokstudyError(
            f"pretrained.{label}: checksum mismatch for {path}: expected {expected}, got {actual}"
        )
    return actual


def import_pretrained(name: str, entry: dict[str, Any], source: Path, directory: Path) -> None:
    """Check a pretrained source and write its tokstudy directory (all or nothing).

    ``entry`` is the config entry (``format``, ``sha256``, ``pattern``…); ``source`` the
    resolved path (a local file or folder, or the downloaded ``hub:`` file).
    """
    fmt, path = detect_format(source, entry.get("format", "auto"))
    digest = check_sha256(path, entry.get("sha256"), name)
    log.info("%s: %s file %s, sha256 %s", name, fmt, path, digest)
    tokenizer = load_source(path, fmt, entry.get("pattern"))
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=directory.parent))
    try:
        shutil.copyfile(path, staging / format_class(fmt).source_file)
        special = tokenizer.special_ids
        vocab_size = len(tokenizer.vocab) - sum(tokenizer.vocab[i] == HOLE for i in special)
        meta = {
            "tokenizer": name,
            "kind": KIND,
            "format": fmt,
            "language": None,
            "requested_vocab_size": None,
            "vocab_size": vocab_size,
            "source": str(path),
            "sha256": digest,
            "pattern": getattr(tokenizer, "pattern", None),
            "tokstudy_version": __version__,
        }
        (staging / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", "utf-8")
        counts = np.zeros(len(tokenizer.vocab), dtype=np.int64)
        write_vocab_tsv(staging / VOCAB_FILE, tokenizer.vocab, counts)
        if directory.exists():
            shutil.rmtree(directory)
        staging.rename(directory)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    log.info("%s: %d vocabulary items (%d special ids)", name, vocab_size, len(special))


def download_hub_file(url: str, sha256: str, destination: Path, name: str) -> None:
    """Download a ``hub:`` tokenizer file and verify its sha256 (nothing kept on mismatch)."""
    import urllib.request

    destination = Path(destination)
    partial = destination.with_name(destination.name + ".part")
    try:
        with urllib.request.urlopen(url) as response, open(partial, "wb") as handle:
            shutil.copyfileobj(response, handle)
        check_sha256(partial, sha256, name)
        partial.rename(destination)
    finally:
        partial.unlink(missing_ok=True)
