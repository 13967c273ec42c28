"""The whitespace words of a batch of lines, found with numpy, against ``str.split``."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.tokenizers.words import batch_words

#: every whitespace character of ``str.isspace``
WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
#: letters, and code points past the end of the whitespace table, some of them a whitespace
#: code point away from a multiple of its length (a lookup that wraps would call them space)
PAST_THE_TABLE = [chr(0x3002 * k + ord(space)) for k in (1, 2) for space in " \t\x85\u2000"]
CHARACTERS = st.sampled_from(
    [*WHITESPACE, *PAST_THE_TABLE, "a", "é", "日", "\u3001", "\U0001f600", "\U0010fffd"]
)


@given(
    lines=st.lists(st.text(CHARACTERS, max_size=12).map(lambda s: s.replace("\n", "")), max_size=6)
)
@settings(max_examples=300, deadline=None)
def test_batch_words_are_those_of_str_split(lines: list[str]) -> None:
    words = batch_words(lines)
    text = "\n".join(lines)
    assert words.counts.tolist() == [len(line.split()) for line in lines]
    spans = [(match.start(), match.end()) for match in re.finditer(r"\S+", text)]
    assert list(zip(words.begins.tolist(), words.ends.tolist(), strict=True)) == spans
    for line, (start, first, count) in enumerate(
        zip(words.line_starts.tolist(), words.first.tolist(), words.counts.tolist(), strict=True)
    ):
        assert text[start : start + len(lines[line])] == lines[line]
        found = [text[b:e] for b, e in spans[first : first + count]]
        assert found == lines[line].split()


def test_a_lone_surrogate_is_a_character_of_its_word() -> None:
    # text read with errors="surrogateescape" can hold lone surrogates: not whitespace
    words = batch_words(["a\udcff b", "\ud800"])
    assert words.counts.tolist() == [2, 1]
    assert list(zip(words.begins.tolist(), words.ends.tolist(), strict=True)) == [
        (0, 2),
        (3, 4),
        (5, 6),
    ]
