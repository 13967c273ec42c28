"""The one optimizer of every trained model: AdamW, weight decay on weight matrices only,
with its learning-rate schedule."""

from __future__ import annotations

from typing import NamedTuple

import torch
from transformers import get_inverse_sqrt_schedule, get_linear_schedule_with_warmup

#: the learning-rate schedules after the linear warm-up: ``linear`` decays to 0 at the last
#: step (clm, MLM, fine-tuning), ``inverse_sqrt`` falls as 1/√step (NMT)
SCHEDULES = ("linear", "inverse_sqrt")


class Optimization(NamedTuple):
    """An optimizer and its learning-rate schedule, stepped together by the loop."""

    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler


def build_optimizer(
    model: torch.nn.Module,
    lr: float,
    weight_decay: float,
    *,
    steps: int,
    warmup_steps: int,
    schedule: str = "linear",
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    device: torch.device | None = None,
) -> Optimization:
    """AdamW over ``model``'s trainable parameters, with ``weight_decay`` on the weight
    matrices and none on biases and normalisation weights (parameters of fewer than two
    dimensions); its fused kernel on a CUDA ``device``. The learning rate warms up
    linearly over ``warmup_steps`` to ``lr``, then follows ``schedule``
    (:data:`SCHEDULES`); ``linear`` reaches 0 at ``steps`` (its warm-up at most that)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; known: {', '.join(SCHEDULES)}")
    decay, no_decay = [], []
    for param in model.parameters():
        if param.requires_grad:
            (decay if param.ndim >= 2 else no_decay).append(param)
    fused = device is not None and device.type == "cuda"
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=lr,
        betas=betas,
        eps=eps,
        **({"fused": True} if fused else {}),
    )
    if schedule == "inverse_sqrt":
        return Optimization(optimizer, get_inverse_sqrt_schedule(optimizer, warmup_steps))
    warmup_steps = min(warmup_steps, steps)
    return Optimization(optimizer, get_linear_schedule_with_warmup(optimizer, warmup_steps, steps))
