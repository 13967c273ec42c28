"""The decoder of a preset for a tokenizer's vocabulary, its training FLOPs per token and
the steps of a budget."""

from __future__ import annotations

import math
from typing import Any

from transformers import LlamaConfig

from tokstudy.models.config import CLM_PRESETS, ClmConfig
from tokstudy.training.flops import encoder_flops_per_token


def llama_config(tokenizer: Any, config: ClmConfig) -> LlamaConfig:
    """The decoder of ``config.preset`` for ``tokenizer``'s vocabulary (tied embeddings)."""
    sizes = {k: v for k, v in CLM_PRESETS[config.preset].items() if not k.startswith("max_")}
    return LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=config.context,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
        attention_dropout=config.dropout,
        attn_implementation="sdpa",
        **sizes,
    )


def train_flops_per_token(model_config: LlamaConfig, context: int) -> float:
    """Training FLOPs per token: 6 · matmul parameters (layers and the output head) plus
    12 · layers · context · hidden for the attention scores and values (counted in full)."""
    d = model_config.hidden_size
    return encoder_flops_per_token(
        layers=model_config.num_hidden_layers,
        hidden=d,
        intermediate=model_config.intermediate_size,
        context=context,
        ffn_matrices=3,
        head_params=model_config.vocab_size * d,
    )


def training_steps(config: ClmConfig, n_blocks: int, flops_per_token: float) -> int:
    """Optimizer steps of the budget: ``epochs`` over the blocks (``bytes``), or as many
    steps as ``train_flops`` pays for (``flops``); at least 1."""
    if config.budget == "flops":
        return max(
            1, int(config.train_flops // (flops_per_token * config.batch_size * config.context))
        )
    return max(1, math.ceil(config.epochs * n_blocks / config.batch_size))
