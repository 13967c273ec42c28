"""BBPE pre-processing: text → words ("units") → bytes, and back.

A line is cut into units:

* every whitespace character, every CJK character (:mod:`tokstudy.tokenizers.unicode_ranges`)
  and every punctuation character (Unicode category ``P*``) is a unit of its own;
* every maximal run of other characters is a *plain* unit (a word).

Whitespace is kept losslessly. Two plain units can only follow each other in the original
text when whitespace separates them, so with word boundaries marked a single space
(U+0020) between two plain units is left implicit: it is dropped when encoding and
restored when decoding. Every other whitespace character (tabs, newlines, runs of
spaces, leading/trailing spaces, spaces next to punctuation or CJK) stays an explicit
unit and is encoded as bytes like any other unit (``20`` for a space).
Without word boundaries (``word_boundary: none``) units cannot be told apart after
encoding, so every whitespace character stays explicit.

Units are byte strings. Inside the HF ``tokenizers`` BPE model each byte ``b`` is the
symbol ``chr(0x100 + b)`` (one printable letter per byte, never whitespace, never ``#``);
the vocabulary shows tokens as uppercase hex pairs (``E895``, trailing: ``##A4``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import regex

from tokstudy.tokenizers.base import SPECIAL_TOKENS
from tokstudy.tokenizers.unicode_ranges import cjk_regex_class_body

#: marks a token that continues a unit (its first byte is not the unit's first byte)
TRAILING_PREFIX = "##"
SYMBOL_OFFSET = 0x100
_ISOLATED_CLASS = rf"\s\p{{P}}{cjk_regex_class_body()}"
#: group 1: a plain unit, group 2: one isolated character
_UNIT_PATTERN = regex.compile(rf"([^{_ISOLATED_CLASS}]+)|(.)", regex.DOTALL)
_PLAIN_START = regex.compile(rf"[^{_ISOLATED_CLASS}]")
_BYTES_TO_SYMBOLS = {byte: chr(SYMBOL_OFFSET + byte) for byte in range(256)}
_SPECIALS = frozenset(SPECIAL_TOKENS)


def split_units(text: str, implicit_space: bool) -> list[str]:
    """Cut ``text`` into units; with ``implicit_space`` drop single spaces between plain units."""
    pieces = _UNIT_PATTERN.findall(text)
    if not implicit_space:
        return [plain or isolated for plain, isolated in pieces]
    units: list[str] = []
    for index, (plain, isolated) in enumerate(pieces):
        if (
            isolated == " "
            and 0 < index < len(pieces) - 1
            and pieces[index - 1][0]
            and pieces[index + 1][0]
        ):
            continue
        units.append(plain or isolated)
    return units


def to_symbols(unit: str) -> str:
    """The unit's UTF-8 bytes as BPE symbols, one character per byte."""
    return bytes_to_symbols(unit.encode("utf-8"))


def bytes_to_symbols(data: bytes) -> str:
    """Bytes as BPE symbols, one character per byte."""
    return data.decode("latin-1").translate(_BYTES_TO_SYMBOLS)


def symbol_byte(symbol: str) -> int:
    """The byte a BPE symbol stands for."""
    return ord(symbol) - SYMBOL_OFFSET


def symbols_to_hex(token: str) -> str:
    """A BPE-model token (``##`` + symbols) in vocabulary form (``##`` + hex pairs)."""
    if token in _SPECIALS:
        return token
    prefix = TRAILING_PREFIX if token.startswith(TRAILING_PREFIX) else ""
    body = token.removeprefix(prefix)
    return prefix + "".join(f"{symbol_byte(symbol):02X}" for symbol in body)


def hex_to_symbols(token: str) -> str:
    """Inverse of :func:`symbols_to_hex`."""
    if token in _SPECIALS:
        return token
    prefix = TRAILING_PREFIX if token.startswith(TRAILING_PREFIX) else ""
    return prefix + bytes_to_symbols(bytes.fromhex(token.removeprefix(prefix)))


def byte_tokens(trailing: bool) -> list[str]:
    """All 256 single-byte tokens as BPE symbols, in byte order (with ``##`` if trailing)."""
    prefix = TRAILING_PREFIX if trailing else ""
    return [prefix + chr(SYMBOL_OFFSET + byte) for byte in range(256)]


def is_plain(unit: str) -> bool:
    """Whether a decoded unit is a plain unit (a word, not an isolated character)."""
    return _PLAIN_START.match(unit) is not None


def join_units(tokens: Sequence[str], word_boundary: bool) -> str:
    """Text of hex-form tokens: the inverse of splitting, byte conversion and BPE.

    Special tokens come out as their literal text. Byte sequences that are not valid
    UTF-8 (only possible for id sequences that encoding never produces) decode with
    U+FFFD replacement characters.
    """
    if word_boundary:
        return "".join(_join_with_spaces(_units_of(tokens)))
    return "".join(_decode_runs(tokens))


def _units_of(tokens: Iterable[str]) -> Iterable[tuple[str, bool]]:
    """(text, is_special) of each unit: a unit starts at every leading token."""
    current: bytearray | None = None
    for token in tokens:
        if token in _SPECIALS:
            if current is not None:
                yield current.decode("utf-8", "replace"), False
                current = None
            yield token, True
        elif token.startswith(TRAILING_PREFIX) and current is not None:
            current += bytes.fromhex(token[len(TRAILING_PREFIX) :])
        else:
            if current is not None:
                yield current.decode("utf-8", "replace"), False
            current = bytearray(bytes.fromhex(token.removeprefix(TRAILING_PREFIX)))
    if current is not None:
        yield current.decode("utf-8", "replace"), False


def _join_with_spaces(units: Iterable[tuple[str, bool]]) -> Iterable[str]:
    previous_plain = False
    for text, special in units:
        plain = not special and is_plain(text)
        if previous_plain and plain:
            yield " "
        yield text
        previous_plain = plain


def _decode_runs(tokens: Iterable[str]) -> Iterable[str]:
    """Concatenate byte tokens; special tokens interrupt the byte runs."""
    run = bytearray()
    for token in tokens:
        if token in _SPECIALS:
            yield run.decode("utf-8", "replace")
            run.clear()
            yield token
        else:
            run += bytes.fromhex(token)
    yield run.decode("utf-8", "replace")
