"""HFT vocabulary learning on pre-token types with counts.

Start from every character of the training pre-tokens (and the five marks) with its count.
Each iteration:

1. segment every pre-token type with the current vocabulary (:mod:`.segment`) and count,
   weighted by the type's count, every subword and every *candidate*: the concatenation of
   two adjacent subwords that is not yet in the vocabulary (counts of equal strings from
   different pairs are summed);
2. add the ``step`` most frequent candidates (frequency descending, then string ascending);
3. remove every multi-character subword counted in step 1 less often than the last
   candidate added (characters are never removed); every entry now has its frequency from
   this iteration: its step-1 count, or its candidate count if it was just added;
4. stop when the vocabulary has reached the target size: if it went past it, the
   multi-character entries ranked last (frequency ascending, then string descending) are
   dropped so that it has exactly the target size.

The loop is deterministic, so a vocabulary state that repeats means it cycles: from then
on (and after ``max_iterations`` iterations) step 3 is skipped, which guarantees progress.
Learning also stops when no candidate is left (every type is one subword): the target is
then out of reach. A target below the number of characters returns the characters only.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched
from tokstudy.runtime.jit import njit
from tokstudy.tokenizers.hft.part_starts import code_points
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer
from tokstudy.tokenizers.hft.scan import PartCounter
from tokstudy.tokenizers.hft.segment import (
    CharCodes,
    Segmenter,
    add_child,
    child_node,
    grown,
)
from tokstudy.tokenizers.hft.vocab import HFTVocab

log = logging.getLogger(__name__)

#: default share of the target size added per iteration
DEFAULT_STEP_FRACTION = 0.05
DEFAULT_MAX_ITERATIONS = 1000
#: lines pre-tokenized and counted at a time
COUNT_BATCH_LINES = 4096


@dataclass(frozen=True)
class LearnResult:
    """A learned vocabulary and how learning ended."""

    vocab: HFTVocab
    #: "target" (size reached), "too_small" (target below the characters), "saturated"
    outcome: str
    n_characters: int
    iterations: int


def step_size(target: int, fraction: float = DEFAULT_STEP_FRACTION) -> int:
    """Candidates added per iteration: ``ceil(fraction × target)``, at least one."""
    if not 0 < fraction <= 1:
        raise TokstudyError(f"hft param 'step_fraction' must be in (0, 1], got {fraction}")
    return max(1, math.ceil(fraction * target))


@njit(cache=True)
def count_candidates(
    chars,
    offsets,
    counts,
    pieces,
    piece_off,
    token_lengths,
    token_node,
    keys,
    values,
    node_token,
    node_parent,
    node_char,
    n_nodes,
    n_chars,
):
    """Subword counts and candidate counts per trie node (candidate nodes are added)."""
    n_tokens = token_lengths.shape[0]
    sub = np.zeros(n_tokens, dtype=np.int64)
    capacity = node_token.shape[0]
    cand = np.zeros(capacity, dtype=np.int64)
    for w in range(offsets.shape[0] - 1):
        weight = counts[w]
        pos = offsets[w]
        last = piece_off[w + 1] - 1
        for k in range(piece_off[w], last + 1):
            token = pieces[k]
            sub[token] += weight
            pos += token_lengths[token]
            if k == last:
                continue
            node = token_node[token]
            for q in range(pos, pos + token_lengths[pieces[k + 1]]):
                key = node * n_chars + chars[q]
                nxt = child_node(keys, values, key)
                if nxt < 0:
                    if n_nodes == capacity:
                        capacity *= 2
                        node_token = grown(node_token, capacity, -1)
                        node_parent = grown(node_parent, capacity, -1)
                        node_char = grown(node_char, capacity, -1)
                        cand = grown(cand, capacity, 0)
                    nxt = n_nodes
                    n_nodes += 1
                    keys, values = add_child(keys, values, n_nodes - 2, key, nxt)
                    node_parent[nxt] = node
                    node_char[nxt] = chars[q]
                node = nxt
            if node_token[node] < 0:
                cand[node] += weight
    return sub, cand[:n_nodes], node_parent[:n_nodes], node_char[:n_nodes]


def _count(segmenter: Segmenter, chars, offsets, counts, pieces, piece_off):
    """:func:`count_candidates` for a segmentation made with ``segmenter`` (whose trie
    receives the candidate nodes)."""
    return count_candidates(
        chars,
        offsets,
        counts,
        pieces,
        piece_off,
        segmenter.token_lengths,
        segmenter.token_node,
        segmenter.keys,
        segmenter.values,
        segmenter.node_token,
        segmenter.node_parent,
        segmenter.node_char,
        segmenter.n_nodes,
        len(segmenter.codes),
    )


@njit(cache=True)
def _node_codepoints(nodes, node_parent, node_char, codepoints):
    """Code points of the strings of trie ``nodes`` (flat) and their offsets."""
    lengths = np.zeros(nodes.shape[0], dtype=np.int64)
    for k in range(nodes.shape[0]):
        node = nodes[k]
        while node > 0:
            lengths[k] += 1
            node = node_parent[node]
    offsets = np.zeros(nodes.shape[0] + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(lengths)
    out = np.empty(offsets[-1], dtype=np.uint32)
    for k in range(nodes.shape[0]):
        node = nodes[k]
        pos = offsets[k + 1] - 1
        while node > 0:
            out[pos] = codepoints[node_char[node]]
            pos -= 1
            node = node_parent[node]
    return out, offsets


def _node_strings(nodes: np.ndarray, node_parent, node_char, codes: CharCodes) -> list[str]:
    points, offsets = _node_codepoints(nodes, node_parent, node_char, codes.codepoints)
    joined = points.tobytes().decode("utf-32-le", "surrogatepass")
    bounds = offsets.tolist()
    return [joined[bounds[k] : bounds[k + 1]] for k in range(len(nodes))]


def _top_candidates(
    cand: np.ndarray, wanted: int, node_parent, node_char, codes: CharCodes
) -> list[tuple[str, int]]:
    """The ``wanted`` best candidates: frequency descending, then string ascending."""
    nodes = np.flatnonzero(cand)
    if not len(nodes):
        return []
    counts = cand[nodes]
    wanted = min(wanted, len(nodes))
    cutoff = np.partition(counts, len(counts) - wanted)[len(counts) - wanted]
    chosen = nodes[counts >= cutoff]
    strings = _node_strings(chosen, node_parent, node_char, codes)
    ranked = sorted(zip(strings, cand[chosen].tolist(), strict=True), key=lambda x: (-x[1], x[0]))
    return ranked[:wanted]


def _ordered(vocab: Mapping[str, int], marks: Marks) -> HFTVocab:
    """Marks first (fixed order), then characters, then longer entries, each by
    frequency descending, then string."""
    mark_list = list(marks.as_dict().values())
    rest = sorted((t for t in vocab if t not in mark_list), key=lambda t: (-vocab[t], t))
    chars = [t for t in rest if len(t) == 1]
    longer = [t for t in rest if len(t) > 1]
    tokens = tuple(mark_list + chars + longer)
    return HFTVocab(tokens, tuple(vocab[t] for t in tokens))


def count_pretokens(
    lines: Iterable[str],
    pretokenizer: Pretokenizer,
    source: str,
    batch_lines: int = COUNT_BATCH_LINES,
) -> dict[str, int]:
    """Count of every pre-token type in ``lines`` (lines of the file ``source``), in order
    of first occurrence.

    The lines are cut into words and gaps by compiled code (:func:`.scan.count_parts`),
    ``batch_lines`` at a time; only the distinct parts are turned into pre-tokens.
    """
    counter = PartCounter()
    read = 0
    for batch in batched(lines, batch_lines):
        if pretokenizer.has_mark("".join(batch)):
            for number, line in enumerate(batch, start=read + 1):
                pretokenizer.check(line, f"{source}:{number}")
        counter.add(batch)
        if (read + len(batch)) // 100_000 > read // 100_000:
            log.info("hft: pre-tokenized %d lines of %s", read + len(batch), source)
        read += len(batch)
    counts: dict[str, int] = {}
    for is_word, raw, count in counter.parts():
        pretoken = pretokenizer.encode_part(is_word, raw)
        counts[pretoken] = counts.get(pretoken, 0) + count
    return counts


def character_counts(word_counts: Mapping[str, int], marks: Marks) -> dict[str, int]:
    """Count of every character in the pre-token types, the five marks always included
    (first, then the characters in order of first occurrence)."""
    counts = dict.fromkeys(marks.as_dict().values(), 0)
    points, offsets = code_points(list(word_counts))
    if not len(points):
        return counts
    weights = np.repeat(
        np.fromiter(word_counts.values(), np.int64, len(word_counts)), np.diff(offsets)
    )
    order = np.argsort(points, kind="stable")
    ranked = points[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    totals = np.add.reduceat(weights[order], starts)
    first = order[starts]
    for k in np.argsort(first).tolist():
        char = chr(ranked[starts[k]])
        counts[char] = counts.get(char, 0) + int(totals[k])
    return counts


def learn_vocabulary(
    word_counts: Mapping[str, int],
    target: int,
    marks: Marks,
    step: int,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> LearnResult:
    """Learn an HFT vocabulary of ``target`` entries from pre-token counts."""
    if not word_counts:
        raise TokstudyError("hft: no training text (the corpus has no pre-tokens)")
    vocab = character_counts(word_counts, marks)
    n_chars = len(vocab)
    if target < n_chars:
        log.warning(
            "hft: target size %d is below the %d characters; keeping the characters only",
            target,
            n_chars,
        )
        return LearnResult(_ordered(vocab, marks), "too_small", n_chars, 0)

    words = sorted(word_counts)
    codes = CharCodes(list(vocab))
    chars, offsets = codes.encode(words)
    counts = np.array([word_counts[w] for w in words], dtype=np.int64)
    seen = {frozenset(vocab.items())}
    capacity = 0
    pruning = True
    iteration = 0
    outcome = "target"
    while len(vocab) < target:
        iteration += 1
        tokens = list(vocab)
        segmenter = Segmenter(tokens, [vocab[t] for t in tokens], codes, capacity)
        pieces, piece_off = segmenter.segment_codes(chars, offsets)
        sub, cand, parent, char = _count(segmenter, chars, offsets, counts, pieces, piece_off)
        capacity = len(cand) + len(cand) // 4
        added = _top_candidates(cand, step, parent, char, codes)
        if not added:
            outcome = "saturated"
            log.warning("hft: no candidates left at %d entries (target %d)", len(vocab), target)
            break
        threshold = added[-1][1]
        sub_counts = dict(zip(tokens, sub.tolist(), strict=True))
        vocab = {
            t: c for t, c in sub_counts.items() if len(t) == 1 or not pruning or c >= threshold
        }
        vocab.update(added)
        removed = len(tokens) + len(added) - len(vocab)
        log.info(
            "hft: iteration %d: +%d -%d → %d/%d entries (threshold %d)",
            iteration,
            len(added),
            removed,
            len(vocab),
            target,
            threshold,
        )
        state = frozenset(vocab.items())
        if pruning and (state in seen or iteration >= max_iterations):
            log.info("hft: vocabulary cycles or iteration limit; no more removals")
            pruning = False
        seen.add(state)
    if len(vocab) > target:
        ranked = sorted((t for t in vocab if len(t) > 1), key=lambda t: (-vocab[t], t))
        for token in ranked[target - len(vocab) :]:
            del vocab[token]
    return LearnResult(_ordered(vocab, marks), outcome, n_chars, iteration)
