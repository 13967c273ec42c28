"""Token NLL of a stream longer than the context: sliding windows whose right edge moves
``stride`` tokens at a time, each token scored once with at least ``context - stride``
tokens of left context (:mod:`tokstudy.models.clm`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from tokstudy.runtime.progress import progress

log = logging.getLogger(__name__)

#: a causal LM: ``model(input_ids=…)`` returns an object with ``.logits``
LogitsModel = Callable[..., Any]


def window_plan(n_tokens: int, context: int, stride: int) -> list[tuple[int, int, int]]:
    """``(begin, end, first scored)`` of each scoring window over positions ``0…n-1``.

    Window ``k`` ends at ``min(context + k·stride, n)``, starts ``context`` positions
    before (at least 0) and scores the positions from the previous window's end (1 for
    the first: position 0 is the ``[SEP]`` the text starts from) to its own end.
    """
    if not 0 < stride < context:
        raise ValueError(f"stride {stride} must lie in 1..{context - 1}")
    plan, scored_to, end = [], 1, min(context, n_tokens)
    while scored_to < n_tokens:
        plan.append((max(0, end - context), end, scored_to))
        scored_to, end = end, min(end + stride, n_tokens)
    return plan


@torch.no_grad()
def token_nll(
    model: LogitsModel,
    stream: np.ndarray,
    context: int,
    stride: int,
    *,
    batch_size: int = 8,
    device: torch.device | None = None,
) -> np.ndarray:
    """NLL in nats of every position ``1…n-1`` of ``stream`` given what precedes it
    (sliding windows of :func:`window_plan`); ``model(input_ids=…)`` returns ``.logits``."""
    device = device or torch.device("cpu")
    ids = torch.as_tensor(stream, dtype=torch.long)
    nll = np.full(len(stream) - 1, np.nan)
    plan = window_plan(len(stream), context, stride)
    bar = progress(len(plan), "scoring windows", log, unit="window")
    for first in range(0, len(plan), batch_size):
        chunk = plan[first : first + batch_size]
        width = max(end - begin for begin, end, _ in chunk)
        # right padding: a causal model's earlier positions never see it
        batch = torch.zeros(len(chunk), width, dtype=torch.long)
        for row, (begin, end, _) in enumerate(chunk):
            batch[row, : end - begin] = ids[begin:end]
        logits = model(input_ids=batch.to(device)).logits.float()
        log_probs = torch.log_softmax(logits, dim=-1).cpu()
        for row, (begin, end, scored) in enumerate(chunk):
            targets = ids[scored:end]
            predicted_at = torch.arange(scored - 1, end - 1) - begin
            picked = log_probs[row, predicted_at].gather(1, targets[:, None])[:, 0]
            nll[scored - 1 : end - 1] = -picked.numpy()
        bar.update(len(chunk))
    bar.close()
    return nll
