"""How a tokenizer cuts numbers: tokens per number, 3-digit grouping and its direction.

**Generated numbers** (seeded): for every length of 1 to 12 digits, ``per_length``
integers drawn uniformly among the integers of that many digits (0-9 for one digit), each
written three ways: ``plain`` (``1234567``), ``separated`` with a comma every three digits
from the right (``1,234,567``) and ``decimal``: the plain integer, a point and two drawn
digits (``1234567.08``).

**Numbers of a text**: maximal matches of ``\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:\\.\\d+)?``
over ASCII digits (:data:`NUMBER`).

**Per number**, the tokenizer encodes the number alone; its boundaries inside the number
come from its decoder (:func:`tokstudy.analyses.morphology.spans.token_boundaries`; a
number whose tokens cannot be mapped back is counted as ``unmappable`` and left out of
the shares). The *digit run* of a number is its first run of digits (the integer part);
only runs of at least 4 digits say anything about grouping. With ``L`` digits and the
token boundaries ``B`` strictly inside the run:

* ``right3``: ``B`` is exactly ``{L-3, L-6, …} ∩ (0, L)``: chunks of three counted from
  the right (``1|234|567``), the thousands grouping;
* ``left3``: ``B`` is exactly ``{3, 6, …} ∩ (0, L)``: chunks of three from the left
  (``123|456|7``);
* ``single``: every position is a boundary (one token per digit).

When ``L`` is a multiple of 3 both groupings are the same cut: such a run counts for
``right3`` and ``left3`` but not for the direction. The **direction** of a tokenizer is
``right-to-left`` when at least half of its runs of ``L`` not a multiple of 3 are
``right3``, ``left-to-right`` when at least half are ``left3``, ``single digits`` when at
least half are ``single``, and ``mixed`` otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from tokstudy.analyses.morphology.spans import token_boundaries
from tokstudy.tokenizers.base import Tokenizer

NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", re.ASCII)
DIGIT_RUN = re.compile(r"\d+", re.ASCII)
MAX_DIGITS = 12
FORMS = ("plain", "separated", "decimal")
COLUMNS = ("number", "source", "digits", "tokens", "mappable", "right3", "left3", "single")


def generated_numbers(seed: int, per_length: int) -> list[tuple[str, str]]:
    """``(number, form)`` for every length of 1-12 digits, ``per_length`` integers each,
    in the three forms (see the module docstring)."""
    rng = np.random.default_rng(seed)
    numbers = []
    for length in range(1, MAX_DIGITS + 1):
        low = 0 if length == 1 else 10 ** (length - 1)
        for value in rng.integers(low, 10**length, size=per_length):
            cents = int(rng.integers(0, 100))
            numbers += [
                (str(value), "plain"),
                (f"{value:,}", "separated"),
                (f"{value}.{cents:02d}", "decimal"),
            ]
    return numbers


def numbers_in(texts: Iterable[str]) -> Iterator[str]:
    """The numbers of ``texts``, in order (see :data:`NUMBER`)."""
    for text in texts:
        yield from (match.group() for match in NUMBER.finditer(text))


def groupings(length: int) -> tuple[frozenset[int], frozenset[int]]:
    """The right- and left-aligned 3-digit cuts of a run of ``length`` digits."""
    right = frozenset(range(length - 3, 0, -3))
    left = frozenset(range(3, length, 3))
    return right, left


def number_row(tokenizer: Tokenizer, number: str) -> dict[str, object]:
    """One number's tokens and grouping (``None`` for a run shorter than 4 digits)."""
    run = DIGIT_RUN.search(number)
    length = len(run.group()) if run else 0
    found = token_boundaries(tokenizer, number)
    row: dict[str, object] = {"number": number, "digits": length, "mappable": found is not None}
    row["tokens"] = len(tokenizer.encode(number))
    if found is None or length < 4:
        return {**row, "right3": None, "left3": None, "single": None}
    inside = frozenset(b - run.start() for b in found if run.start() < b < run.end())
    right, left = groupings(length)
    return {
        **row,
        "right3": inside == right,
        "left3": inside == left,
        "single": inside == frozenset(range(1, length)),
    }


def number_table(tokenizer: Tokenizer, numbers: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """One row per ``(number, source)`` (see :data:`COLUMNS`)."""
    rows = [{**number_row(tokenizer, n), "source": source} for n, source in numbers]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def direction(rows: pd.DataFrame) -> str:
    """``right-to-left``, ``left-to-right``, ``single digits`` or ``mixed`` (module
    docstring) over the rows whose run says which; ``n/a`` without such rows."""
    telling = rows[(rows["digits"] >= 4) & (rows["digits"] % 3 != 0) & rows["right3"].notna()]
    if telling.empty:
        return "n/a"
    for column, name in (
        ("right3", "right-to-left"),
        ("left3", "left-to-right"),
        ("single", "single digits"),
    ):
        if telling[column].astype(bool).mean() >= 0.5:
            return name
    return "mixed"


def summarise(table: pd.DataFrame) -> dict[str, object]:
    """Numbers, unmappable ones, tokens per number and the grouping shares of one table."""
    mappable = table[table["mappable"]]
    runs = mappable[mappable["right3"].notna()]
    share = (lambda c: float(runs[c].astype(bool).mean())) if len(runs) else (lambda c: np.nan)
    return {
        "numbers": len(table),
        "unmappable": int((~table["mappable"]).sum()),
        "tokens_per_number": float(table["tokens"].mean()) if len(table) else np.nan,
        "runs_of_4_plus": len(runs),
        "share_right3": share("right3"),
        "share_left3": share("left3"),
        "share_single_digits": share("single"),
        "direction": direction(mappable),
    }
