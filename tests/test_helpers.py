"""The helpers every layer shares, each defined once: a cell's size label
(:func:`tokstudy.tokenizers.cells.size_label`) and a one-line error message
(:func:`tokstudy.errors.one_line`)."""

from __future__ import annotations

import pytest

from tokstudy.errors import TokstudyError, one_line
from tokstudy.tokenizers.cells import FULL_SIZE_LABEL, PRETRAINED, size_label


@pytest.mark.parametrize(
    ("tokenizer", "size", "kind", "label"),
    [
        ("sp_bpe", 300, "trained", "300"),
        ("sp_bpe", "300", "trained", "300"),
        ("sp_bpe", 300.0, "trained", "300"),  # a size read back from a CSV
        ("char", 57, "trained", FULL_SIZE_LABEL),  # the data sets char's size
        ("characterbert", "100", "trained", "100"),  # not a registered tokenizer
        ("characterbert", FULL_SIZE_LABEL, "trained", FULL_SIZE_LABEL),
        ("gpt_4o", 200_000, PRETRAINED, PRETRAINED),
    ],
)
def test_size_label(tokenizer: str, size: object, kind: str, label: str) -> None:
    assert size_label(tokenizer, size, kind) == label


@pytest.mark.parametrize(
    ("error", "line"),
    [
        ("a\n  multi-line\tmessage ", "a multi-line message"),
        (TokstudyError("config key x:\n bad"), "config key x: bad"),
        (ValueError("bad\nvalue"), "ValueError: bad value"),
        (KeyError("k"), "KeyError: 'k'"),
        (RuntimeError(), "RuntimeError: RuntimeError()"),
    ],
)
def test_one_line(error: object, line: str) -> None:
    assert one_line(error) == line
