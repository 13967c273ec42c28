"""HFT pre-tokenization: text ↔ marked pre-tokens, exactly invertible.

The text is cut at every border between *word characters* (Unicode letters, numbers,
combining marks, ZWJ/ZWNJ) and everything else. A *word* is a run of word characters;
``-``, ``.`` or ``/`` between word characters, and ``,`` between two numbers, keep it one
word (``2,56,278``, ``e-mail``, ``km/h``, ``U.S``). The text between two words is a *gap*.
Subwords never cross pre-token boundaries.

Marks (single characters that cannot occur in the text; Private Use Area by default):

* ``token``: written before and after every word (``DcatD``); two words separated by
  exactly one U+0020 space are written back to back (``DaDDbD``) — that space is implicit.
* ``space``: every other whitespace character is explicit: U+0020 is the mark alone, any
  other whitespace character ``c`` is the mark followed by the four lowercase hex digits of
  ``ord(c)`` (all Unicode whitespace is in the BMP). Pre-tokens never contain whitespace.
* ``upper``: the next character is the lower-case form of an upper-case letter.
* ``upper_run`` … ``upper_end``: a run of two or more upper-case letters, written lower case.

Only *invertible* upper-case characters are folded: ``c.lower()`` is one character ``l``
with ``l != c`` and ``l.upper() == c``. Others (``İ``, ``ẞ``, titlecase ``ǅ``, ``K`` Kelvin)
are kept verbatim, so :meth:`Pretokenizer.detokenize` restores the text exactly. Text that
contains a mark character is rejected with :class:`~tokstudy.errors.TokstudyError`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from functools import cache

import regex

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import UNK
from tokstudy.tokenizers.params import Param

#: what an [UNK] id decodes to (one per unknown character)
UNK_TEXT = "\ufffd"
#: SentencePiece's word-boundary mark in pieces of pre-tokenized text (``sp_*_hftpretok``)
WORD_BOUNDARY = "\u2581"
#: the ``marks`` parameter (``{name: character}``) of ``hft`` and ``sp_*_hftpretok``
MARKS_PARAM = Param((dict, type(None)), None)

#: word characters: letters, numbers, combining marks, ZWNJ and ZWJ
WORD_CHAR_CLASS = r"[\p{L}\p{N}\p{M}\u200c\u200d]"
#: a word: word characters, joined by -, . or / between them, or , between two numbers
WORD_PATTERN = rf"{WORD_CHAR_CLASS}+(?:(?:[-./]|(?<=\p{{N}}),(?=\p{{N}})){WORD_CHAR_CLASS}+)*"
_WORD_SPLIT = regex.compile(f"({WORD_PATTERN})")
_WORD_CHAR_RE = regex.compile(WORD_CHAR_CLASS)
#: distinct parts whose pre-tokens a :class:`Pretokenizer` keeps (about 100 bytes each)
PRETOKEN_CACHE_SIZE = 1 << 20


@dataclass(frozen=True)
class Marks:
    """The five mark characters (defaults: U+E000…U+E004, Private Use Area)."""

    token: str = "\ue000"
    space: str = "\ue001"
    upper: str = "\ue002"
    upper_run: str = "\ue003"
    upper_end: str = "\ue004"

    def __post_init__(self) -> None:
        marks = astuple(self)
        for name, mark in zip(self.field_names(), marks, strict=True):
            if len(mark) != 1:
                raise TokstudyError(f"hft mark {name!r} must be one character, got {mark!r}")
            if mark.isspace() or _WORD_CHAR_RE.match(mark) or mark.lower() != mark.upper():
                raise TokstudyError(
                    f"hft mark {name!r} = U+{ord(mark):04X} must not be whitespace, a word "
                    "character or have case"
                )
        if len(set(marks)) != len(marks):
            raise TokstudyError(f"hft marks must be five distinct characters, got {marks!r}")

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of the marks, in their fixed order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_param(cls, value: Mapping[str, str] | None) -> Marks:
        """Marks from a ``{name: character}`` mapping (missing names keep their default)."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping) or set(value) - set(cls.field_names()):
            raise TokstudyError(
                f"hft param 'marks' must map some of {', '.join(cls.field_names())} to "
                f"characters, got {value!r}"
            )
        return cls(**value)

    def as_dict(self) -> dict[str, str]:
        """``{name: character}`` for every mark."""
        return dict(zip(self.field_names(), astuple(self), strict=True))


@cache
def _whitespace_code_points() -> list[int]:
    """The whitespace characters (all in the BMP)."""
    return [c for c in range(0x10000) if chr(c).isspace()]


def _invertible_lower(char: str) -> str | None:
    """The lower-case form of ``char`` if folding it can be undone exactly, else ``None``."""
    lower = char.lower()
    if len(lower) == 1 and lower != char and lower.upper() == char:
        return lower
    return None


class Pretokenizer:
    """Turns text into HFT pre-tokens and marked text back into the original text."""

    def __init__(self, marks: Marks | None = None) -> None:
        self.marks = marks or Marks()
        m = self.marks
        self._mark_re = regex.compile("[" + regex.escape("".join(astuple(m))) + "]")
        self._lower: dict[str, str | None] = {}
        # a part is a word or a gap by its characters alone, so its text is the key
        self._pretoken_of: dict[str, str] = {}
        self._whitespace = {
            c: m.space if c == 0x20 else f"{m.space}{c:04x}" for c in _whitespace_code_points()
        }
        up, run, end = (regex.escape(x) for x in (m.upper, m.upper_run, m.upper_end))
        self._upper_run_re = regex.compile(f"{run}([^{end}]*){end}", regex.DOTALL)
        self._upper_next_re = regex.compile(f"{up}(.)", regex.DOTALL)
        self._escape_re = regex.compile(regex.escape(m.space) + "([0-9a-f]{4})")
        self._stray_re = regex.compile(f"[{up}{run}{end}]")

    def has_mark(self, text: str) -> bool:
        """Whether ``text`` contains a mark character."""
        return self._mark_re.search(text) is not None

    def check(self, text: str, where: str = "text") -> None:
        """Raise :class:`TokstudyError` if ``text`` contains a mark character."""
        found = self._mark_re.search(text)
        if found:
            name = self.marks.field_names()[astuple(self.marks).index(found.group())]
            raise TokstudyError(
                f"{where}: contains U+{ord(found.group()):04X} at offset {found.start()}, the "
                f"hft {name!r} mark; choose other characters with the 'marks' param"
            )

    def check_lines(self, lines: Sequence[str], where: str = "text") -> None:
        """:meth:`check` every line (``where`` gets `` line N``) with one search."""
        if self.has_mark("".join(lines)):
            for number, line in enumerate(lines, start=1):
                self.check(line, f"{where} line {number}")

    @staticmethod
    def is_word(raw: str) -> bool:
        """Whether a word or gap of some text is a word."""
        return _WORD_CHAR_RE.match(raw) is not None

    def parts(self, text: str) -> Iterator[tuple[bool, str]]:
        """``(is_word, raw)`` for each part of ``text`` that becomes a pre-token (unchecked).

        Dropped: empty gaps and a gap of one U+0020 between two words (implicit).
        """
        split = _WORD_SPLIT.split(text)
        last = len(split) - 1
        for index, raw in enumerate(split):
            if index % 2:
                yield True, raw
            elif raw and not (raw == " " and 0 < index < last):
                yield False, raw

    def encode_part(self, is_word: bool, raw: str) -> str:
        """The pre-token of one part yielded by :meth:`parts`."""
        if is_word:
            return self.marks.token + self.case_encode(raw) + self.marks.token
        return self.case_encode(raw).translate(self._whitespace)

    def pretokenize(self, text: str, where: str = "text") -> list[str]:
        """The pre-tokens of ``text``; their concatenation is its marked form."""
        self.check(text, where)
        return self.pretokens(text)

    def pretokens(self, text: str) -> list[str]:
        """:meth:`pretokenize` without the check for marks (done by the caller, e.g. once
        per batch with :meth:`check_lines`).

        Each distinct part is encoded once: its pre-token is kept (the cache is emptied
        when it reaches :data:`PRETOKEN_CACHE_SIZE` parts).
        """
        cache = self._pretoken_of
        pretokens = []
        for is_word, raw in self.parts(text):
            pretoken = cache.get(raw)
            if pretoken is None:
                if len(cache) >= PRETOKEN_CACHE_SIZE:
                    cache.clear()
                pretoken = cache[raw] = self.encode_part(is_word, raw)
            pretokens.append(pretoken)
        return pretokens

    def case_encode(self, text: str) -> str:
        """Fold invertible upper-case letters, adding the case marks."""
        if text.lower() == text:
            return text
        out: list[str] = []
        run: list[str] = []
        for char in text:
            lower = self._lower.get(char, "")
            if lower == "":
                lower = self._lower[char] = _invertible_lower(char)
            if lower is not None:
                run.append(lower)
                continue
            self._flush_run(run, out)
            out.append(char)
        self._flush_run(run, out)
        return "".join(out)

    def _flush_run(self, run: list[str], out: list[str]) -> None:
        if len(run) == 1:
            out.append(self.marks.upper + run[0])
        elif run:
            out.append(self.marks.upper_run + "".join(run) + self.marks.upper_end)
        run.clear()

    def detokenize(self, marked: str) -> str:
        """The text of a marked string (the concatenation of pre-tokens or subwords).

        Exact for anything :meth:`pretokenize` produced; never fails on other strings.
        """
        m = self.marks
        text = self._upper_run_re.sub(lambda g: g[1].upper(), marked)
        text = self._upper_next_re.sub(lambda g: g[1].upper(), text)
        text = self._escape_re.sub(self._unescape, text).replace(m.space, " ")
        text = text.replace(m.token + m.token, " ").replace(m.token, "")
        return self._stray_re.sub("", text)

    @staticmethod
    def _unescape(found: regex.Match[str]) -> str:
        char = chr(int(found[1], 16))
        return char if char.isspace() else found[0]


def pieces_to_text(pieces: Sequence[str], pretokenizer: Pretokenizer) -> str:
    """Text of SentencePiece pieces of pre-tokenized text (``[UNK]`` becomes U+FFFD)."""
    marked = "".join(UNK_TEXT if piece == UNK else piece for piece in pieces)
    return pretokenizer.detokenize(marked.replace(WORD_BOUNDARY, "").replace(" ", ""))
