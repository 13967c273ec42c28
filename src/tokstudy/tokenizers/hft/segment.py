"""Best segmentation of pre-tokens into HFT subwords (numba kernels over a character trie).

The best segmentation of a string has (1) the fewest subwords; among those (2) the highest
minimum subword frequency; among those (3) the longest first subword, then the longest
second, … (the lexicographically largest sequence of subword lengths). A character that
is not in the vocabulary becomes one unknown piece (id ``-1``) and cuts the string there:
each run of known characters between unknown ones is segmented on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tokstudy.runtime.jit import njit

_INF = np.iinfo(np.int64).max


class CharCodes:
    """Dense ids for a set of characters; unknown characters get ``-1``."""

    def __init__(self, chars: Sequence[str]) -> None:
        self.chars = sorted(set(chars))
        self.codepoints = np.array([ord(c) for c in self.chars], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat character ids of ``texts`` and the offsets where each text starts."""
        joined = "".join(texts).encode("utf-32-le", "surrogatepass")
        points = np.frombuffer(joined, dtype="<u4").astype(np.int64)
        index = np.searchsorted(self.codepoints, points)
        index[index == len(self.codepoints)] = 0
        known = self.codepoints[index] == points if len(self.codepoints) else points < 0
        ids = np.where(known, index, -1)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)), out=offsets[1:])
        return ids, offsets


_GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed 64-bit integer


@njit(cache=True)
def grown(array: np.ndarray, capacity: int, fill: int) -> np.ndarray:
    """A copy of ``array`` enlarged to ``capacity``, new cells set to ``fill``."""
    out = np.full(capacity, fill, dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


# The trie's child map is an open-addressing hash table (keys -1 when empty, linear probing,
# at most half full) of ``node * n_chars + char → child node``: numba's typed Dict needs two
# lookups per probe (its ``get`` is Optional-typed), which doubles the segmentation time.
# Helpers called in inner loops are inlined: a numba call costs ~20 ns, 10× the work.


@njit(cache=True, inline="always")
def child_node(keys, values, key):
    """The node under ``key`` in the child map, ``-1`` if there is none."""
    mask = keys.shape[0] - 1
    slot = ((key * _GOLDEN) >> 29) & mask
    while True:
        found = keys[slot]
        if found == key:
            return values[slot]
        if found < 0:
            return -1
        slot = (slot + 1) & mask


@njit(cache=True, inline="always")
def put_child(keys, values, key, value):
    """Insert an absent ``key`` into a child map that has room for it."""
    mask = keys.shape[0] - 1
    slot = ((key * _GOLDEN) >> 29) & mask
    while keys[slot] >= 0:
        slot = (slot + 1) & mask
    keys[slot] = key
    values[slot] = value


@njit(cache=True)
def _table_capacity(entries):
    capacity = 16
    while capacity < 2 * entries + 2:
        capacity *= 2
    return capacity


@njit(cache=True)
def _enlarged(keys, values, n_entries):
    """A copy of a child map with room for one more entry than its ``n_entries``."""
    capacity = _table_capacity(n_entries + 1)
    new_keys = np.full(capacity, -1, dtype=np.int64)
    new_values = np.empty(capacity, dtype=np.int64)
    for slot in range(keys.shape[0]):
        if keys[slot] >= 0:
            put_child(new_keys, new_values, keys[slot], values[slot])
    return new_keys, new_values


@njit(cache=True, inline="always")
def add_child(keys, values, n_entries, key, value):
    """Insert an absent ``key``; returns the (possibly enlarged) table. Inlined, so that
    the common case (room left) costs a hot loop no call."""
    if 2 * (n_entries + 1) > keys.shape[0]:
        keys, values = _enlarged(keys, values, n_entries)
    put_child(keys, values, key, value)
    return keys, values


@njit(cache=True)
def build_trie(tok_chars, tok_off, n_chars, capacity):
    """A trie of the tokens: its child map and node arrays (token, parent, character),
    with room for at least ``capacity`` nodes."""
    capacity = max(capacity, tok_chars.shape[0] + 1)
    keys = np.full(_table_capacity(capacity), -1, dtype=np.int64)
    values = np.empty(keys.shape[0], dtype=np.int64)
    node_token = np.full(capacity, -1, dtype=np.int64)
    node_parent = np.full(capacity, -1, dtype=np.int64)
    node_char = np.full(capacity, -1, dtype=np.int64)
    n_tokens = tok_off.shape[0] - 1
    token_node = np.empty(n_tokens, dtype=np.int64)
    n_nodes = 1
    for token in range(n_tokens):
        node = 0
        for k in range(tok_off[token], tok_off[token + 1]):
            key = node * n_chars + tok_chars[k]
            nxt = child_node(keys, values, key)
            if nxt < 0:
                nxt = n_nodes
                n_nodes += 1
                put_child(keys, values, key, nxt)
                node_parent[nxt] = node
                node_char[nxt] = tok_chars[k]
            node = nxt
        node_token[node] = token
        token_node[token] = node
    return keys, values, node_token, node_parent, node_char, token_node, n_nodes


@njit(cache=True)
def _segment_run(chars, a, b, keys, values, node_token, freqs, n_chars, cnt, best, out, n_out):
    """Append the best segmentation of known characters ``chars[a:b]`` to ``out``."""
    cnt[b - a] = 0
    best[b - a] = _INF
    for i in range(b - 1, a - 1, -1):
        node = 0
        best_cnt = _INF
        best_min = -1
        for j in range(i, b):
            node = child_node(keys, values, node * n_chars + chars[j])
            if node < 0:
                break
            token = node_token[node]
            if token >= 0:
                c = 1 + cnt[j + 1 - a]
                m = min(freqs[token], best[j + 1 - a])
                if c < best_cnt or (c == best_cnt and m > best_min):
                    best_cnt = c
                    best_min = m
        cnt[i - a] = best_cnt
        best[i - a] = best_min
    target = best[0]
    i = a
    while i < b:
        node = 0
        pick_end = -1
        pick_token = -1
        for j in range(i, b):
            node = child_node(keys, values, node * n_chars + chars[j])
            if node < 0:
                break
            token = node_token[node]
            if (
                token >= 0
                and cnt[j + 1 - a] == cnt[i - a] - 1
                and freqs[token] >= target
                and best[j + 1 - a] >= target
            ):
                pick_end = j + 1
                pick_token = token
        out[n_out] = pick_token
        n_out += 1
        i = pick_end
    return n_out


@njit(cache=True)
def segment_all(chars, offsets, keys, values, node_token, freqs, n_chars):
    """Token ids (``-1``: unknown character) of every string and their offsets."""
    n_words = offsets.shape[0] - 1
    longest = 0
    for w in range(n_words):
        longest = max(longest, offsets[w + 1] - offsets[w])
    cnt = np.empty(longest + 1, dtype=np.int64)
    best = np.empty(longest + 1, dtype=np.int64)
    out = np.empty(chars.shape[0], dtype=np.int64)
    out_off = np.zeros(n_words + 1, dtype=np.int64)
    n_out = 0
    for w in range(n_words):
        a = offsets[w]
        end = offsets[w + 1]
        while a < end:
            if chars[a] < 0:
                out[n_out] = -1
                n_out += 1
                a += 1
                continue
            b = a
            while b < end and chars[b] >= 0:
                b += 1
            n_out = _segment_run(
                chars, a, b, keys, values, node_token, freqs, n_chars, cnt, best, out, n_out
            )
            a = b
        out_off[w + 1] = n_out
    return out[:n_out], out_off


class Segmenter:
    """Segments strings with a fixed vocabulary (``tokens`` with their ``freqs``)."""

    def __init__(
        self,
        tokens: Sequence[str],
        freqs: Sequence[int],
        codes: CharCodes | None = None,
        capacity: int = 0,
    ) -> None:
        """``codes`` defaults to the single-character tokens; ``capacity``: trie nodes to
        make room for (more than the tokens need, when nodes will be added)."""
        self.codes = codes or CharCodes([t for t in tokens if len(t) == 1])
        tok_chars, tok_off = self.codes.encode(tokens)
        if tok_chars.size and tok_chars.min() < 0:
            raise ValueError("every character of a token must have a character id")
        self.freqs = np.asarray(freqs, dtype=np.int64)
        trie = build_trie(tok_chars, tok_off, max(len(self.codes), 1), capacity)
        self.keys, self.values, self.node_token, self.node_parent, self.node_char = trie[:5]
        self.token_node, self.n_nodes = trie[5], trie[6]
        self.token_lengths = np.diff(tok_off)

    def segment_codes(
        self, chars: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:func:`segment_all` on already encoded strings."""
        return segment_all(
            chars,
            offsets,
            self.keys,
            self.values,
            self.node_token,
            self.freqs,
            max(len(self.codes), 1),
        )

    def segment(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text (``-1`` for an unknown character)."""
        ids, offsets = self.segment_codes(*self.codes.encode(texts))
        flat = ids.tolist()
        bounds = offsets.tolist()
        return [flat[bounds[k] : bounds[k + 1]] for k in range(len(texts))]
