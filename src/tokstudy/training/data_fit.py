"""How much data a from-scratch run had for its size (recorded by every training task)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch


def data_facts(model: torch.nn.Module, counts: np.ndarray) -> dict[str, float | int]:
    """How much data a from-scratch run had for its size: training tokens, distinct
    training tokens, non-embedding parameters and training tokens per such parameter.

    ``counts``: how often each token id occurs in the training tokens (``np.bincount``;
    :func:`unit_counts` for a corpus on disk)."""
    embedding = {
        id(p)
        for module in model.modules()
        if isinstance(module, torch.nn.Embedding)
        for p in module.parameters()
    }
    non_embedding = sum(p.numel() for p in model.parameters() if id(p) not in embedding)
    tokens = int(np.sum(counts))
    return {
        "training_tokens": tokens,
        "unique_training_tokens": int(np.count_nonzero(counts)),
        "non_embedding_parameters": non_embedding,
        "tokens_per_parameter": tokens / non_embedding if non_embedding else math.inf,
    }


def unit_counts(chunks: Iterable[np.ndarray], minlength: int = 0) -> np.ndarray:
    """How often each value ``0, 1, …`` occurs in chunks of non-negative integers (at least
    ``minlength`` entries): :meth:`tokstudy.models.data.TokenCorpus.chunks` reads a corpus
    this way without mapping it into memory."""
    counts = np.zeros(minlength, dtype=np.int64)
    for chunk in chunks:
        found = np.bincount(chunk, minlength=minlength)
        if len(found) > len(counts):
            counts = np.pad(counts, (0, len(found) - len(counts)))
        counts[: len(found)] += found
    return counts
