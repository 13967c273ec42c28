"""The one optimizer of every trained model: AdamW, weight decay on weight matrices only."""

from __future__ import annotations

import torch
from transformers import get_linear_schedule_with_warmup


def build_optimizer(
    model: torch.nn.Module,
    lr: float,
    weight_decay: float,
    *,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    fused: bool = False,
) -> torch.optim.AdamW:
    """AdamW over ``model``'s trainable parameters, with ``weight_decay`` on the weight
    matrices and none on biases and normalisation weights (parameters of fewer than two
    dimensions); its fused CUDA kernel when ``fused``. The schedule is the task's."""
    decay, no_decay = [], []
    for param in model.parameters():
        if param.requires_grad:
            (decay if param.ndim >= 2 else no_decay).append(param)
    return torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=lr,
        betas=betas,
        eps=eps,
        **({"fused": True} if fused else {}),
    )


def with_linear_schedule(
    model: torch.nn.Module,
    lr: float,
    weight_decay: float,
    steps: int,
    warmup_steps: int,
    *,
    fused: bool = False,
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """:func:`build_optimizer` and a linear warm-up over ``warmup_steps`` to ``lr``, then a
    linear decay to 0 at ``steps`` (the clm, MLM and fine-tuning schedule)."""
    optimizer = build_optimizer(model, lr, weight_decay, fused=fused)
    return optimizer, get_linear_schedule_with_warmup(optimizer, warmup_steps, steps)
