"""The segmentation viewer's data: sample lines per language, each tokenizer's ids for them,
and how each token used is shown (text, hex bytes, unknown, special) with its training
frequency.

Everything here is JSON-able; the page and ``tokstudy serve`` show it with the same
script. Nothing a tokenizer or a line does stops the build: what fails becomes a note.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tokstudy.errors import one_line
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.tokenizers.base import Tokenizer

#: token kinds (``kind`` of a token entry): text, bytes shown as hex (a partial UTF-8
#: sequence or a byte-fallback token), the unknown token, a special (control) token
TEXT, BYTES, UNKNOWN, SPECIAL = "text", "bytes", "unk", "special"
#: longest line shown; longer held-out lines are cut there (a note says so)
MAX_LINE_CHARS = 400
BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")
HEX = re.compile(r"(?:[0-9A-F]{2})+")
STRONG_RTL = frozenset({"R", "AL"})


@dataclass
class SampleLine:
    """One line of the viewer: its text, where it comes from, its base direction."""

    text: str
    source: str
    dir: str


@dataclass
class Sample:
    """A language's lines for the viewer and the notes about them."""

    lines: list[SampleLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def base_direction(text: str) -> str:
    """``rtl`` or ``ltr`` from the first strong character (Unicode bidi rule P2), ``auto``
    for text without one."""
    for char in text:
        bidi = unicodedata.bidirectional(char)
        if bidi in STRONG_RTL:
            return "rtl"
        if bidi == "L":
            return "ltr"
    return "auto"


def text_notes(text: str) -> list[str]:
    """What in a line may render unexpectedly: mixed directions, control characters,
    combining marks, emoji (symbols outside the Basic Multilingual Plane)."""
    bidi = {unicodedata.bidirectional(char) for char in text}
    categories = {unicodedata.category(char) for char in text}
    notes = []
    if bidi & STRONG_RTL and "L" in bidi:
        notes.append("mixed directions (left-to-right and right-to-left text)")
    if "Cc" in categories or "Cf" in categories:
        notes.append("control or format characters (shown as code points)")
    if categories & {"Mn", "Me"}:
        notes.append("combining marks")
    if any(ord(char) > 0xFFFF and unicodedata.category(char) == "So" for char in text):
        notes.append("emoji")
    return notes


def sample_lines(
    heldout: Path | None,
    count: int,
    seed: int,
    words: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
) -> Sample:
    """``count`` held-out lines drawn with ``seed`` (in file order), then ``words``, then
    ``extra`` lines by source (``udhr``: UDHR article 1)."""
    sample = Sample()
    lines = [] if heldout is None or not Path(heldout).is_file() else read_nonblank_lines(heldout)
    if not lines:
        sample.notes.append("no held-out lines: only the configured words are shown")
    chosen = sorted(random.Random(seed).sample(range(len(lines)), min(count, len(lines))))
    texts = [(lines[index], "heldout") for index in chosen]
    texts += [(word, "word") for word in dict.fromkeys(w.strip() for w in words) if word]
    texts += [(text, source) for source, text in (extra or {}).items() if text.strip()]
    for text, source in texts:
        if len(text) > MAX_LINE_CHARS:
            sample.notes.append(
                f"a {source} line of {len(text)} characters is cut to {MAX_LINE_CHARS}"
            )
            text = text[:MAX_LINE_CHARS]
        sample.lines.append(SampleLine(text, source, base_direction(text)))
    return sample


@dataclass(frozen=True)
class TokenMarks:
    """A tokenizer's unknown and special ids, looked up once per tokenizer."""

    unk: int | None
    special: frozenset[int]

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> TokenMarks:
        """The marks of ``tokenizer``."""
        return cls(tokenizer.unk_id, tokenizer.special_ids)


def token_entry(
    tokenizer: Tokenizer, marks: TokenMarks, vocab: Sequence[str], token_id: int
) -> tuple[str, str]:
    """How one token is shown: ``(display, kind)``.

    Byte-level tokens are read as text (:meth:`Tokenizer.readable_token`); a token whose
    bytes are not whole UTF-8 characters (its decoding alone has U+FFFD) or a byte-fallback
    token (``<0xE0>``) shows its bytes as upper-case hex.
    """
    if token_id == marks.unk:
        return vocab[token_id], UNKNOWN
    if token_id in marks.special:
        return vocab[token_id], SPECIAL
    piece = vocab[token_id]
    fallback = BYTE_FALLBACK.fullmatch(piece)
    if fallback:
        return fallback.group(1).upper(), BYTES
    readable = tokenizer.readable_token(piece)
    decoded = tokenizer.decode([token_id])
    if "\ufffd" in decoded and "\ufffd" not in piece:
        partial = readable if HEX.fullmatch(readable) else readable.encode("utf-8").hex().upper()
        return partial, BYTES
    return readable, TEXT


class Frequencies:
    """Training-text frequency of every token id of one cell (a study frequency table:
    ``id``, ``train_frequency``), or none (``path`` missing: a note says so)."""

    def __init__(self, path: Path | None) -> None:
        self.note: str | None = None
        self.counts = pd.Series(dtype="int64")
        if path is None or not Path(path).is_file():
            self.note = "no frequency table: training frequencies are not shown"
            return
        table = pd.read_csv(path, sep="\t", usecols=["id", "train_frequency"])
        self.counts = pd.Series(table["train_frequency"].to_numpy(), index=table["id"].to_numpy())

    def get(self, token_id: int) -> int | None:
        """The frequency of ``token_id``, ``None`` if unknown."""
        value = self.counts.get(token_id)
        return None if value is None else int(value)


def segment_cell(
    tokenizer: Tokenizer, lines: Sequence[str], frequencies: Frequencies
) -> dict[str, Any]:
    """One tokenizer's view of some lines: ``lines`` (ids per line), ``tokens`` (id →
    ``[display, kind, training frequency or None]``) and ``notes``."""
    notes: list[str] = []
    encoded = tokenizer.encode_batch(list(lines)) if lines else []
    vocab = tokenizer.vocab
    used = sorted({token_id for ids in encoded for token_id in ids})
    notes += [frequencies.note] if frequencies.note else []
    tokens: dict[str, list[Any]] = {}
    undecodable: list[str] = []
    marks = TokenMarks.of(tokenizer)
    for token_id in used:
        try:
            display, kind = token_entry(tokenizer, marks, vocab, token_id)
        except Exception as exc:  # a tokenizer that cannot decode a token: a note, not a crash
            display, kind = vocab[token_id], TEXT
            undecodable.append(f"{token_id} ({one_line(exc)})")
        tokens[str(token_id)] = [display, kind, frequencies.get(token_id)]
    if undecodable:
        notes.append(
            f"{len(undecodable)} tokens cannot be decoded, shown as stored: "
            + ", ".join(undecodable[:3])
            + (", …" if len(undecodable) > 3 else "")
        )
    return {"lines": encoded, "tokens": tokens, "notes": notes}


def udhr_article_one(files: Mapping[str, str | Path]) -> dict[str, dict[str, str]]:
    """The ``extra`` lines of :func:`sample_lines`: article 1 of each language's UDHR
    translation (its lines joined by spaces), by language."""
    from tokstudy.corpora.udhr import read_articles

    extra = {}
    for language, path in sorted(files.items()):
        article = read_articles(Path(path)).get(1, "")
        extra[language] = {"udhr": " ".join(article.split("\n"))}
    return extra
