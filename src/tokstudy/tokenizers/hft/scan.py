"""Numba kernels that cut lines into words and gaps: to look them up (encoding) or to count
them (training).

The cut follows :data:`~tokstudy.tokenizers.hft.pretokenize.WORD_PATTERN` exactly: a
character belongs to a word if it is a word character, or ``-``, ``.``, ``/`` between two
word characters, or ``,`` between two numbers. Known parts (words and gaps) are found in a
hash table (FNV-1a of the code points, checked character by character) of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import regex

from tokstudy.runtime.jit import njit
from tokstudy.tokenizers.hft.part_starts import code_points
from tokstudy.tokenizers.hft.pretokenize import WORD_CHAR_CLASS
from tokstudy.tokenizers.hft.segment import grown

WORD = 1
NUMBER = 2
SPAN = 0x110000  # code points
_FNV_OFFSET = -3750763034362895579  # 0xCBF29CE484222325 as a signed 64-bit integer
_FNV_PRIME = 1099511628211
_SPACE, _COMMA = ord(" "), ord(",")
_JOINERS = (ord("-"), ord("."), ord("/"))


@cache
def char_classes() -> np.ndarray:
    """``WORD`` / ``NUMBER`` bits of every code point, from the pre-tokenizer's classes."""
    points = np.r_[0:0xD800, 0xE000:SPAN].astype("<u4")
    everything = points.tobytes().decode("utf-32-le")
    table = np.zeros(SPAN, dtype=np.uint8)
    for bit, pattern in ((WORD, WORD_CHAR_CLASS), (NUMBER, r"\p{N}")):
        found = "".join(regex.findall(f"{pattern}+", everything))
        table[np.frombuffer(found.encode("utf-32-le"), dtype="<u4")] |= bit
    return table


@njit(cache=True, inline="always")
def _in_word(cps, i, start, end, table):
    c = cps[i]
    if table[c] & WORD:
        return True
    if i == start or i + 1 == end:
        return False
    if c == _COMMA:
        return (table[cps[i - 1]] & NUMBER) != 0 and (table[cps[i + 1]] & NUMBER) != 0
    if c == _JOINERS[0] or c == _JOINERS[1] or c == _JOINERS[2]:
        return (table[cps[i - 1]] & WORD) != 0 and (table[cps[i + 1]] & WORD) != 0
    return False


@njit(cache=True, inline="always")
def _part_end(cps, i, start, end, table):
    """End of the part of line ``cps[start:end]`` that starts at ``i``, and whether it is
    a word."""
    word = _in_word(cps, i, start, end, table)
    j = i + 1
    while j < end and _in_word(cps, j, start, end, table) == word:
        j += 1
    return j, word


@njit(cache=True, inline="always")
def _implicit(cps, i, j, start, end, word):
    """Whether the part ``cps[i:j]`` is a one-space gap between two words (no pre-token)."""
    return not word and j == i + 1 and cps[i] == _SPACE and i > start and j < end


@njit(cache=True, inline="always")
def _part_hash(cps, start, end):
    """FNV-1a over the code points ``cps[start:end]``."""
    h = _FNV_OFFSET
    for q in range(start, end):
        h = (h ^ cps[q]) * _FNV_PRIME
    return h


@njit(cache=True, inline="always")
def _slot(h, mask):
    return (h ^ (h >> 29)) & mask


@njit(cache=True)
def find_part(cps, start, end, h, slots, part_hash, part_off, part_cps):
    """Row of the cached part equal to ``cps[start:end]`` (hash ``h``), or ``-1``."""
    mask = slots.shape[0] - 1
    slot = _slot(h, mask)
    while True:
        row = slots[slot]
        if row < 0:
            return -1
        a = part_off[row]
        if part_hash[row] == h and part_off[row + 1] - a == end - start:
            same = True
            for q in range(end - start):
                if part_cps[a + q] != cps[start + q]:
                    same = False
                    break
            if same:
                return row
        slot = (slot + 1) & mask


@njit(cache=True)
def hash_parts(part_cps, part_off):
    """Hash of each part ``part_cps[part_off[r]:part_off[r + 1]]``."""
    hashes = np.empty(part_off.shape[0] - 1, dtype=np.int64)
    for row in range(hashes.shape[0]):
        hashes[row] = _part_hash(part_cps, part_off[row], part_off[row + 1])
    return hashes


@njit(cache=True)
def insert_rows(slots, part_hash, first_row):
    """Enter rows ``first_row …`` into the hash table ``slots`` (kept at most half full)."""
    for row in range(first_row, part_hash.shape[0]):
        mask = slots.shape[0] - 1
        slot = _slot(part_hash[row], mask)
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = row


@njit(cache=True)
def encode_lines(cps, line_off, table, slots, part_hash, part_off, part_cps, flat, row_start,
                 row_len):  # fmt: skip
    """Ids of every line, or the parts that are not cached yet.

    Returns ``(ids, ids_offsets, miss_starts, miss_ends, n_missing, rows, row_lines)``;
    when parts are missing the ids are incomplete. A one-space gap between two words is
    skipped (it is implicit); every other part is looked up, and ``rows``/``row_lines``
    list the cached row of each part found and its line, in order.
    """
    out = np.empty(cps.shape[0] + 16, dtype=np.int64)
    n_out = 0
    out_off = np.zeros(line_off.shape[0], dtype=np.int64)
    miss_start = np.empty(cps.shape[0] + 1, dtype=np.int64)
    miss_end = np.empty(cps.shape[0] + 1, dtype=np.int64)
    n_miss = 0
    rows = np.empty(cps.shape[0] + 1, dtype=np.int64)
    row_lines = np.empty(cps.shape[0] + 1, dtype=np.int64)
    n_rows = 0
    for line in range(line_off.shape[0] - 1):
        start, end = line_off[line], line_off[line + 1]
        i = start
        while i < end:
            j, word = _part_end(cps, i, start, end, table)
            if not _implicit(cps, i, j, start, end, word):
                h = _part_hash(cps, i, j)
                row = find_part(cps, i, j, h, slots, part_hash, part_off, part_cps)
                if row < 0:
                    miss_start[n_miss] = i
                    miss_end[n_miss] = j
                    n_miss += 1
                else:
                    rows[n_rows] = row
                    row_lines[n_rows] = line
                    n_rows += 1
                    length = row_len[row]
                    if n_out + length > out.shape[0]:
                        out = grown(out, 2 * (n_out + length), 0)
                    out[n_out : n_out + length] = flat[row_start[row] : row_start[row] + length]
                    n_out += length
            i = j
        out_off[line + 1] = n_out
    return (out[:n_out], out_off, miss_start[:n_miss], miss_end[:n_miss], n_miss, rows[:n_rows],
            row_lines[:n_rows])  # fmt: skip


@njit(cache=True)
def count_parts(cps, line_off, table, slots, part_hash, part_off, part_cps, part_word, part_count,
                n_rows):  # fmt: skip
    """Add the parts (words and gaps that become pre-tokens) of every line to the counts.

    Rows ``0 … n_rows - 1`` of the arrays are the distinct parts seen so far, in the order
    of their first occurrence: code points ``part_cps[part_off[r]:part_off[r + 1]]``, hash,
    whether a word, count; ``slots`` is their hash table. Returns the arrays (enlarged when
    full) and the new number of rows.
    """
    for line in range(line_off.shape[0] - 1):
        start, end = line_off[line], line_off[line + 1]
        i = start
        while i < end:
            j, word = _part_end(cps, i, start, end, table)
            if not _implicit(cps, i, j, start, end, word):
                h = _part_hash(cps, i, j)
                row = find_part(cps, i, j, h, slots, part_hash, part_off, part_cps)
                if row < 0:
                    row = n_rows
                    n_rows += 1
                    if n_rows == part_hash.shape[0]:
                        part_hash = grown(part_hash, 2 * n_rows, 0)
                        part_off = grown(part_off, 2 * n_rows + 1, 0)
                        part_word = grown(part_word, 2 * n_rows, False)
                        part_count = grown(part_count, 2 * n_rows, 0)
                    used = part_off[row]
                    if used + j - i > part_cps.shape[0]:
                        part_cps = grown(part_cps, 2 * (used + j - i), 0)
                    part_cps[used : used + j - i] = cps[i:j]
                    part_off[row + 1] = used + j - i
                    part_hash[row] = h
                    part_word[row] = word
                    if 2 * n_rows + 2 > slots.shape[0]:
                        slots = np.full(2 * slots.shape[0], -1, dtype=np.int64)
                        insert_rows(slots, part_hash[:n_rows], 0)
                    else:
                        insert_rows(slots, part_hash[:n_rows], row)
                part_count[row] += 1
            i = j
    return slots, part_hash, part_off, part_cps, part_word, part_count, n_rows


class PartCounter:
    """Counts of the distinct parts of lines added batch by batch (see :func:`count_parts`)."""

    def __init__(self) -> None:
        self._table = char_classes()
        self._slots = np.full(16, -1, dtype=np.int64)
        self._hash = np.zeros(8, dtype=np.int64)
        self._off = np.zeros(9, dtype=np.int64)
        self._cps = np.zeros(64, dtype=np.int64)
        self._word = np.zeros(8, dtype=np.bool_)
        self._count = np.zeros(8, dtype=np.int64)
        self._rows = 0

    def add(self, lines: Sequence[str]) -> None:
        """Count the parts of ``lines``."""
        state = count_parts(
            *code_points(lines),
            self._table,
            self._slots,
            self._hash,
            self._off,
            self._cps,
            self._word,
            self._count,
            self._rows,
        )
        self._slots, self._hash, self._off, self._cps, self._word, self._count, self._rows = state

    def parts(self) -> list[tuple[bool, str, int]]:
        """``(is_word, raw, count)`` of every distinct part, in order of first occurrence."""
        rows = self._rows
        bounds = self._off[: rows + 1].tolist()
        joined = (
            self._cps[: bounds[-1]].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        )
        return [
            (word, joined[bounds[r] : bounds[r + 1]], count)
            for r, word, count in zip(
                range(rows), self._word[:rows].tolist(), self._count[:rows].tolist(), strict=True
            )
        ]
