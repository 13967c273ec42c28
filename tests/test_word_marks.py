"""Token starts from SentencePiece's ``▁`` word marks against a per-token reference."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.tokenizers.word_marks import metaspace_starts

#: piece ids: 0–2 open a word (``▁…``), 3–5 continue one
OPENS_WORD = [True, True, True, False, False, False]


def reference(lines: list[str], ids: list[list[int]]) -> tuple[list[int], list[int], list[int]]:
    """Per token its start and word (−1: not placed), and the lines whose marks miss their
    words, one token at a time."""
    starts, words, unmatched, first = [], [], [], 0
    for number, (line, line_ids) in enumerate(zip(lines, ids, strict=True)):
        begins = [match.start() for match in re.finditer(r"\S+", line)]
        matched = bool(begins) and sum(OPENS_WORD[i] for i in line_ids) == len(begins)
        if begins and not matched:
            unmatched.append(number)
        seen = 0
        for token in line_ids:
            seen += OPENS_WORD[token]
            word = max(seen - 1, 0)
            starts.append(begins[word] if matched else 0)
            words.append(first + word if matched else -1)
        first += len(begins)
    return starts, words, unmatched


@st.composite
def marked_lines(draw: st.DrawFn) -> tuple[list[str], list[list[int]]]:
    """Lines of words and their pieces: mostly one opening piece and some continuing ones
    per word, sometimes a mark too many or too few, or pieces on a line without words."""
    lines, ids = [], []
    for _ in range(draw(st.integers(0, 5))):
        words = draw(st.lists(st.text("ab", min_size=1, max_size=3), max_size=4))
        gaps = draw(
            st.lists(
                st.sampled_from([" ", "  ", "\t"]), min_size=len(words) + 1, max_size=len(words) + 1
            )
        )
        lines.append(gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:], strict=True)))
        pieces = []
        for _word in words:
            pieces.append(draw(st.integers(0, 2)))
            pieces.extend(draw(st.lists(st.integers(3, 5), max_size=2)))
        if draw(st.booleans()):
            pieces.insert(0, draw(st.integers(3, 5)))  # before the first mark
        if draw(st.integers(0, 5)) == 0:
            pieces.append(draw(st.integers(0, 5)))  # perhaps a mark too many
        ids.append(pieces)
    return lines, ids


@given(batch=marked_lines())
@settings(max_examples=400, deadline=None)
def test_word_mark_starts_match_a_token_by_token_reference(
    batch: tuple[list[str], list[list[int]]],
) -> None:
    lines, ids = batch
    placed, unmatched = metaspace_starts(lines, ids, np.array(OPENS_WORD))
    starts, words, expected_unmatched = reference(lines, ids)
    assert unmatched.tolist() == expected_unmatched
    assert placed.ids.tolist() == [i for line_ids in ids for i in line_ids]
    assert placed.lengths.tolist() == [len(line_ids) for line_ids in ids]
    assert placed.starts.tolist() == starts
    if expected_unmatched:
        assert placed.word is None  # the caller fills the starts in, then words are searched
    else:
        assert placed.word.tolist() == words
