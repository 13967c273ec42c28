"""Token starts part by part (:mod:`tokstudy.tokenizers.hft.part_starts`) against the
generic starts from decoded prefixes, on pre-tokens cut into tokens at random."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.tokenizers.base import prefix_offsets
from tokstudy.tokenizers.hft.part_starts import PartRows, code_points
from tokstudy.tokenizers.hft.pretokenize import UNK_TEXT, Pretokenizer

PRETOKENIZER = Pretokenizer()
line_text = st.text(st.sampled_from(list("abC DÉé1,.-\t\xa0\ufffd☃")), max_size=16)


def cut(pretoken: str, data: st.DataObject) -> list[str]:
    """``pretoken`` cut into tokens: maybe an empty first token (a bare ``▁`` piece), and
    maybe one run of characters replaced by U+FFFD (an ``[UNK]`` covering it)."""
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(pretoken) - 1, 1)), max_size=4)))
    tokens = [pretoken[a:b] for a, b in zip([0, *cuts], [*cuts, len(pretoken)], strict=True)]
    tokens = [token for token in tokens if token]
    if data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(tokens) - 1))
        if not set(tokens[index]) & set(PRETOKENIZER.marks.as_dict().values()):
            tokens[index] = UNK_TEXT
    return [""] * data.draw(st.integers(0, 1)) + tokens


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(line_text, min_size=1, max_size=4), data=st.data())
def test_starts_equal_the_decoded_prefix_starts(lines: list[str], data: st.DataObject) -> None:
    parts = [[cut(p, data) for p in PRETOKENIZER.pretokenize(line)] for line in lines]
    expected = []
    for line, line_parts in zip(lines, parts, strict=True):
        tokens = [token for part in line_parts for token in part]
        prefixes = [PRETOKENIZER.detokenize("".join(tokens[:k])) for k in range(len(tokens))]
        expected += [start for start, _ in prefix_offsets(line, prefixes)]
    rows = PartRows(PRETOKENIZER.marks, PRETOKENIZER.detokenize)
    distinct = sorted({tuple(part) for line_parts in parts for part in line_parts})
    rows.add(distinct)
    row_of = {part: row for row, part in enumerate(distinct)}
    part_rows = np.array([row_of[tuple(p)] for line_parts in parts for p in line_parts], np.int64)
    line_of_part = np.repeat(np.arange(len(lines)), [len(p) for p in parts])
    starts = rows.token_starts(part_rows, line_of_part, *code_points(lines))
    assert starts.tolist() == expected
