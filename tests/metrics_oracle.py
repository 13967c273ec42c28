"""An independent oracle for the intrinsic metrics: the lines' ids (``encode_batch``, not
the streamed, offset-carrying encoding that :func:`~tokstudy.metrics.compute.compute_metrics`
reads), counted with ``collections.Counter`` and plain Python arithmetic straight from the
definitions in :mod:`tokstudy.metrics.compute`' docstring (no numpy, no token offsets).

Fertility needs no offsets here: every token of a line that has words belongs to one of its
words, so a corpus's fertility is the tokens of its lines with words over its words.
``continued_words`` (which needs each word's tokens) is left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from tokstudy.tokenizers.base import Tokenizer


def brute_force_metrics(tokenizer: Tokenizer, lines: Sequence[str]) -> dict[str, float]:
    """The metrics of ``tokenizer`` on ``lines`` (all but ``continued_words``)."""
    encoded = tokenizer.encode_batch(list(lines))
    tokens = sum(len(ids) for ids in encoded)
    words = sum(len(line.split()) for line in lines)
    counts = Counter(i for ids in encoded for i in ids)
    vocab_size = len(tokenizer.vocab)
    occurring = {i: n for i, n in counts.items() if i not in tokenizer.special_ids}
    in_words = sum(len(ids) for ids, line in zip(encoded, lines, strict=True) if line.split())
    ranked = sorted(occurring.values(), reverse=True)
    total = sum(ranked)
    renyi = math.log(sum((n / total) ** 2.5 for n in ranked)) / (1 - 2.5)
    return {
        "lines": len(lines),
        "words": words,
        "tokens": tokens,
        "vocab_size": vocab_size,
        "mu": tokens / len(lines),
        "fertility": in_words / words,
        "unk_rate": counts[tokenizer.unk_id] / tokens if tokenizer.unk_id is not None else 0.0,
        "chars_per_token": sum(len(line) for line in lines) / tokens,
        "bytes_per_token": sum(len(line.encode("utf-8")) for line in lines) / tokens,
        "vocab_used": len(occurring) / (vocab_size - len(tokenizer.special_ids)),
        "f95": ranked[math.floor(0.95 * len(ranked))],
        "nu": sum(rank * n for rank, n in enumerate(ranked, start=1))
        / sum(range(1, len(ranked) + 1)),
        "renyi_efficiency": renyi / math.log(vocab_size),
    }
