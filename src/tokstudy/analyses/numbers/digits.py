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
the shares). The *integer digits* of a number are the digits before its decimal point,
thousands separators removed (``1,234,567.08`` → ``1234567``, ``L = 7``); only ``L ≥ 4``
says anything about grouping. The boundaries are those of the number as written, each
counted in integer digits before it (:func:`digit_cuts`): in ``1|,|234|,|567`` the cuts
after ``1`` and after ``1,`` are both at 1 digit, those around the second comma at 4, so
the cuts are ``{1, 4}``; cuts in the decimal part, or at its point, are not inside the
integer digits. With the set ``B`` of cuts strictly inside the ``L`` integer digits:

* ``right3``: ``B`` is exactly ``{L-3, L-6, …} ∩ (0, L)``: chunks of three counted from
  the right (``1|234|567``, or ``1|,|234|,|567`` as written), the thousands grouping;
* ``left3``: ``B`` is exactly ``{3, 6, …} ∩ (0, L)``: chunks of three from the left
  (``123|456|7``);
* ``single``: every position is a boundary (one token per digit).

When ``L`` is a multiple of 3 both groupings are the same cut: such a number counts for
``right3`` and ``left3`` but not for the direction. The **direction** of a tokenizer is
``right-to-left`` when at least half of its numbers of ``L ≥ 4`` not a multiple of 3 are
``right3``, ``left-to-right`` when at least half are ``left3``, ``single digits`` when at
least half are ``single``, and ``mixed`` otherwise. (``runs_of_4_plus`` in the summary
counts the mappable numbers of ``L ≥ 4``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from tokstudy.analyses.morphology.spans import ALONE, token_boundaries
from tokstudy.tokenizers.base import Tokenizer

NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", re.ASCII)
#: what separates the integer part from the decimals in :data:`NUMBER`
DECIMAL_POINT = "."
MAX_DIGITS = 12
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


def digit_cuts(number: str, boundaries: Iterable[int]) -> tuple[int, frozenset[int]]:
    """``L``, the integer digits of ``number`` (separators removed), and its
    ``boundaries`` (character offsets of the number as written) counted in integer digits
    before each, those strictly inside the integer digits (module docstring)."""
    integer = number.split(DECIMAL_POINT, 1)[0]
    digits_before, count = [0], 0
    for character in integer:
        count += character.isdigit()
        digits_before.append(count)
    inside = frozenset(
        digits_before[b] for b in boundaries if b < len(integer) and 0 < digits_before[b] < count
    )
    return count, inside


def number_row(tokenizer: Tokenizer, number: str) -> dict[str, object]:
    """One number's tokens and grouping (``None`` for fewer than 4 integer digits)."""
    found = token_boundaries(tokenizer, number, ALONE)
    length, inside = digit_cuts(number, found or ())
    row: dict[str, object] = {"number": number, "digits": length, "mappable": found is not None}
    row["tokens"] = len(tokenizer.encode(number))
    if found is None or length < 4:
        return {**row, "right3": None, "left3": None, "single": None}
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
    docstring) over the rows whose integer digits say which; ``n/a`` without such rows."""
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
