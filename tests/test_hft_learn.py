"""HFT segmentation and learning: brute force and the oracle agree with the fast code."""

from __future__ import annotations

import gzip
from functools import cache
from itertools import islice

import hft_oracle as oracle
import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.hft.learn import (
    character_counts,
    count_pretokens,
    learn_vocabulary,
    step_size,
)
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer
from tokstudy.tokenizers.hft.segment import Segmenter

pytestmark = pytest.mark.shared


MARKS = Marks()
PRE = Pretokenizer(MARKS)
CORPORA = SHARED / "corpora" / "hft2022"


def all_segmentations(text: str, vocab: set[str]):
    """Every way to cut ``text`` into entries of ``vocab``."""
    if not text:
        yield []
        return
    for end in range(1, len(text) + 1):
        if text[:end] in vocab:
            for rest in all_segmentations(text[end:], vocab):
                yield [text[:end], *rest]


def brute_force(text: str, freq: dict[str, int]) -> list[str]:
    """The documented best segmentation, by exhaustive search."""
    return min(
        all_segmentations(text, set(freq)),
        key=lambda s: (len(s), -min(freq[p] for p in s), [-len(p) for p in s]),
    )


entries = st.dictionaries(
    st.text("abc", min_size=2, max_size=4), st.integers(0, 5), max_size=12
).map(lambda d: {"a": 3, "b": 1, "c": 2} | d)


@settings(max_examples=200, deadline=None)
@given(freq=entries, texts=st.lists(st.text("abc", min_size=1, max_size=9), min_size=1))
def test_segmentation_is_the_documented_optimum(freq: dict[str, int], texts: list[str]) -> None:
    tokens = sorted(freq)
    fast = Segmenter(tokens, [freq[t] for t in tokens]).segment(texts)
    for text, ids in zip(texts, fast, strict=True):
        expected = brute_force(text, freq)
        assert [tokens[i] for i in ids] == expected
        assert oracle.segment(text, freq) == expected


def test_unknown_characters_become_unknown_pieces_and_cut_the_word() -> None:
    freq = {"a": 1, "b": 1, "ab": 5, "abab": 1}
    tokens = sorted(freq)
    [ids] = Segmenter(tokens, [freq[t] for t in tokens]).segment(["abzabab"])
    assert [tokens[i] if i >= 0 else None for i in ids] == ["ab", None, "abab"]
    assert oracle.segment("abzabab", freq) == ["ab", None, "abab"]


MARK_CHARS = "".join(MARKS.as_dict().values())
#: text where words, gaps, joiners, case and whitespace meet, and text of any characters
any_text = st.one_of(
    st.text(st.sampled_from(list(" aZ1٣२ा,.-/\t\u00a0É"))),
    st.text(st.characters(blacklist_characters=MARK_CHARS)),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(any_text, max_size=8), batch_lines=st.integers(1, 4))
def test_compiled_pretoken_counts_equal_the_simple_counts(
    lines: list[str], batch_lines: int
) -> None:
    fast = count_pretokens(lines, PRE, "corpus", batch_lines)
    assert list(fast.items()) == list(oracle.count_pretokens(lines, PRE).items())


def test_a_mark_in_the_training_text_names_its_line() -> None:
    lines = ["ok", "fine", "also fine", "bad \ue001 line"]
    with pytest.raises(TokstudyError, match=r"c\.txt:4: contains U\+E001"):
        count_pretokens(lines, PRE, "c.txt", batch_lines=3)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1), st.integers(1, 10**15)))
def test_character_counts_equal_the_simple_loop(word_counts: dict[str, int]) -> None:
    expected = dict.fromkeys(MARKS.as_dict().values(), 0)
    for word, count in word_counts.items():
        for char in word:
            expected[char] = expected.get(char, 0) + count
    assert list(character_counts(word_counts, MARKS).items()) == list(expected.items())


@cache
def corpus_lines(language: str, n_lines: int = 2000) -> tuple[str, ...]:
    with gzip.open(CORPORA / f"{language}.txt.gz", "rt", encoding="utf-8") as handle:
        return tuple(line.rstrip("\n") for line in islice(handle, n_lines))


@cache
def word_counts(language: str) -> dict[str, int]:
    return dict(oracle.count_pretokens(corpus_lines(language), PRE))


@pytest.mark.parametrize(("language", "target"), [("en", 400), ("en", 1200), ("hi", 800)])
def test_fast_learning_matches_the_oracle(language: str, target: int) -> None:
    counts = word_counts(language)
    step = step_size(target)
    result = learn_vocabulary(counts, target, MARKS, step)
    tokens, freq, outcome = oracle.learn(counts, target, MARKS, step)
    assert (result.outcome, outcome) == ("target", "target")
    assert list(result.vocab.tokens) == tokens
    assert list(result.vocab.freqs) == [freq[t] for t in tokens]
    words = sorted(counts)
    segmented = Segmenter(tokens, [freq[t] for t in tokens]).segment(words)
    assert [[tokens[i] for i in ids] for ids in segmented] == [
        oracle.segment(w, freq) for w in words
    ]


def test_learning_without_removal_after_the_iteration_limit_matches_the_oracle() -> None:
    counts = word_counts("en")
    result = learn_vocabulary(counts, 500, MARKS, 40, max_iterations=2)
    tokens, freq, _ = oracle.learn(counts, 500, MARKS, 40, max_iterations=2)
    assert list(result.vocab.tokens) == tokens
    assert list(result.vocab.freqs) == [freq[t] for t in tokens]


@pytest.mark.parametrize("target", [300, 777])
def test_learning_invariants(target: int) -> None:
    counts = word_counts("hi")
    result = learn_vocabulary(counts, target, MARKS, step_size(target))
    tokens = result.vocab.tokens
    characters = {c for word in counts for c in word} | set(MARKS.as_dict().values())
    assert len(tokens) == target
    assert characters <= set(tokens)
    assert tokens[:5] == tuple(MARKS.as_dict().values())
    assert learn_vocabulary(counts, target, MARKS, step_size(target)) == result


def test_target_below_the_characters_keeps_the_characters(caplog) -> None:
    counts = {f"{MARKS.token}abc{MARKS.token}": 3, "!": 1}
    result = learn_vocabulary(counts, 6, MARKS, 1)
    assert result.outcome == "too_small"
    assert sorted(result.vocab.tokens) == sorted("abc!" + "".join(MARKS.as_dict().values()))
    assert "below the 9 characters" in caplog.text


def test_single_character_corpus_saturates() -> None:
    counts = {f"{MARKS.token}{'a' * n}{MARKS.token}": n for n in (1, 2, 3)}
    result = learn_vocabulary(counts, 100, MARKS, 2)
    assert result.outcome == "saturated"
    whole_words = {f"{MARKS.token}{'a' * n}{MARKS.token}" for n in (1, 2, 3)}
    assert whole_words <= set(result.vocab.tokens)
    assert oracle.learn(counts, 100, MARKS, 2)[0] == list(result.vocab.tokens)


def test_no_text_is_an_error() -> None:
    with pytest.raises(TokstudyError, match="no training text"):
        learn_vocabulary({}, 100, MARKS, 5)


def test_step_fraction_must_be_a_share() -> None:
    assert step_size(3000) == 150
    with pytest.raises(TokstudyError, match="step_fraction"):
        step_size(3000, 0)
