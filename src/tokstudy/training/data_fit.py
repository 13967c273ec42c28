"""How much data a from-scratch run had for its size (recorded by every training task)."""

from __future__ import annotations

import math

import numpy as np
import torch


def data_facts(model: torch.nn.Module, train_ids: np.ndarray) -> dict[str, float | int]:
    """How much data a from-scratch run had for its size: training tokens, distinct
    training tokens, non-embedding parameters and training tokens per such parameter."""
    embedding = {
        id(p)
        for module in model.modules()
        if isinstance(module, torch.nn.Embedding)
        for p in module.parameters()
    }
    non_embedding = sum(p.numel() for p in model.parameters() if id(p) not in embedding)
    tokens = len(train_ids)
    return {
        "training_tokens": tokens,
        "unique_training_tokens": len(np.unique(train_ids)),
        "non_embedding_parameters": non_embedding,
        "tokens_per_parameter": tokens / non_embedding if non_embedding else math.inf,
    }
