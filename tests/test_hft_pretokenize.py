"""HFT pre-tokenization: examples, exact inversion, mark handling."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.hft import pretokenize
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer

PRE = Pretokenizer()
D, S, U, A, E = Marks().as_dict().values()
MARK_CHARS = "".join(Marks().as_dict().values())


def words(text: str) -> list[str]:
    """The pre-tokens of ``text`` that are words, without their delimiter marks."""
    return [p[1:-1] for p in PRE.pretokenize(text) if p.startswith(D)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2,56,278 new cases", ["2,56,278", "new", "cases"]),
        ("an e-mail to km/h and a.b.c", ["an", "e-mail", "to", "km/h", "and", "a.b.c"]),
        ("1.5 or 3/4, not a,b", ["1.5", "or", "3/4", "not", "a", "b"]),
        ("end-", ["end"]),
        ("राष्ट्रवादी नेता", ["राष्ट्रवादी", "नेता"]),
        ("東京は日本の首都です。", ["東京は日本の首都です"]),
        ("ሰላም። ܫܠܡܐ ᏣᎳᎩ", ["ሰላም", "ܫܠܡܐ", f"{A}ꮳꮃꭹ{E}"]),
    ],
)
def test_words_are_cut_at_alphanumeric_borders(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_marks_for_words_case_and_whitespace() -> None:
    text = "Hello, NASA  McDonald\tok. ÉCOLE"
    assert PRE.pretokenize(text) == [
        f"{D}{U}hello{D}",
        f",{S}",
        f"{D}{A}nasa{E}{D}",
        f"{S}{S}",
        f"{D}{U}mc{U}donald{D}",
        f"{S}0009",
        f"{D}ok{D}",
        f".{S}",
        f"{D}{A}école{E}{D}",
    ]


def test_single_space_between_words_is_implicit_and_edges_are_explicit() -> None:
    assert PRE.pretokenize("a b") == [f"{D}a{D}", f"{D}b{D}"]
    assert PRE.pretokenize(" a b ") == [S, f"{D}a{D}", f"{D}b{D}", S]
    assert PRE.pretokenize("a\u00a0b\n") == [f"{D}a{D}", f"{S}00a0", f"{D}b{D}", f"{S}000a"]


@pytest.mark.parametrize("text", ["ß STRASSE", "İstanbul", "ǅemal", "ΟΔΟΣ ς", "\u212a", "ẞ"])
def test_case_folding_is_exactly_invertible(text: str) -> None:
    assert PRE.detokenize("".join(PRE.pretokenize(text))) == text


def test_non_invertible_upper_case_stays_verbatim() -> None:
    assert words("İ ǅ ẞ \u212a") == ["İ", "ǅ", "ẞ", "\u212a"]


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_characters=MARK_CHARS)))
def test_detokenize_inverts_pretokenize(text: str) -> None:
    pretokens = PRE.pretokenize(text)
    assert all(p and not any(c.isspace() for c in p) for p in pretokens)
    assert PRE.detokenize("".join(pretokens)) == text


@settings(max_examples=100, deadline=None)
@given(st.text(st.sampled_from(" \taZ.,-" + MARK_CHARS + "0f")))
def test_detokenize_accepts_any_string(marked: str) -> None:
    # whatever the marks, none is left in the text, and the text between them is kept
    text = PRE.detokenize(marked)
    assert not any(mark in text for mark in MARK_CHARS)
    plain = "".join(c for c in marked if c not in MARK_CHARS)
    assert text.replace(" ", "").lower() == plain.replace(" ", "").lower()


@pytest.mark.parametrize(
    ("marked", "text"),
    [
        (U, ""),  # an upper-case mark with nothing to raise
        (A + "ab", "ab"),  # a run never ended: its start mark is dropped
        (A + "ab" + E + "c", "ABc"),
        (U + "a" + E, "A"),  # a stray end mark
        (D + D, " "),  # two word delimiters: the space between two words
        ("x" + D + "y" + D + D + "z", "xy z"),
        (S, " "),
        (S + "0020", " "),  # an escaped whitespace character
        (S + "000f", " 000f"),  # not whitespace: no escape, a space mark then the digits
    ],
)
def test_detokenize_of_misplaced_marks(marked: str, text: str) -> None:
    assert PRE.detokenize(marked) == text


@settings(max_examples=50, deadline=None)
@given(st.text(), st.sampled_from(MARK_CHARS), st.text())
def test_text_with_a_mark_is_rejected(before: str, mark: str, after: str) -> None:
    with pytest.raises(TokstudyError, match=r"corpus.txt:3: contains U\+E00\d"):
        PRE.pretokenize(before + mark + after, "corpus.txt:3")


def test_configurable_marks() -> None:
    marks = Marks(token="|", space="_", upper="^", upper_run="<", upper_end=">")
    pre = Pretokenizer(marks)
    assert pre.pretokenize("Hi OK, ok") == ["|^hi|", "|<ok>|", ",_", "|ok|"]
    assert pre.detokenize("".join(pre.pretokenize("Hi OK, ok"))) == "Hi OK, ok"
    with pytest.raises(TokstudyError, match="'space' mark"):
        pre.pretokenize("snake_case")


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ({"token": "ab"}, "one character"),
        ({"token": "x"}, "word character"),
        ({"space": "\t"}, "whitespace"),
        ({"upper": "\ue000"}, "distinct"),
        ({"tokens": "|"}, "must map some of"),
    ],
)
def test_invalid_marks_are_rejected(marks: dict[str, str], message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        Marks.from_param(marks)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(st.sampled_from(" \t,.aAbBé1É-"), max_size=12), min_size=1, max_size=6)
)
def test_cached_pretokens_equal_the_parts_encoded_one_by_one(texts: list[str]) -> None:
    # each distinct part is encoded once per pretokenizer; a tiny cache is emptied on the way
    for size in (2, pretokenize.PRETOKEN_CACHE_SIZE):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pretokenize, "PRETOKEN_CACHE_SIZE", size)
            cached = Pretokenizer()
            for text in texts + texts[::-1]:
                expected = [PRE.encode_part(is_word, raw) for is_word, raw in PRE.parts(text)]
                assert cached.pretokenize(text) == expected
                assert len(cached._pretoken_of) <= size
