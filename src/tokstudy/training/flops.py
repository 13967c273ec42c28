"""Training FLOPs of the study's transformers (per token; per sentence pair for an
encoder-decoder), for FLOP/s and MFU in the logs.

The usual count (Kaplan et al. 2020; PaLM, appendix B): a matmul of a token through a
``m × n`` weight costs ``2mn`` FLOPs forward and ``4mn`` backward, so ``6`` per matmul
parameter; attention scores and values add ``12 · layers · context · hidden`` (counted
in full, causal masking or not). Embedding lookups, norms and softmaxes are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def encoder_flops_per_token(
    *,
    layers: int,
    hidden: int,
    intermediate: int,
    context: int,
    ffn_matrices: int = 2,
    head_params: float = 0.0,
    attention_matrices: int = 4,
) -> float:
    """``6 · (layers · (attention_matrices · d² + ffn_matrices · d · ff) + head_params)
    + 12 · layers · context · d``: a stack of transformer layers (Q, K, V, O projections;
    two FFN matrices, three for a gated FFN such as Llama's) and an output head of
    ``head_params`` matmul parameters per token."""
    per_layer = attention_matrices * hidden * hidden + ffn_matrices * hidden * intermediate
    return 6.0 * (layers * per_layer + head_params) + 12.0 * layers * context * hidden


def encoder_decoder_flops(
    *,
    hidden: int,
    encoder_layers: int,
    decoder_layers: int,
    encoder_intermediate: int,
    decoder_intermediate: int,
    target_vocab: int,
    source_lengths: Sequence[int],
    target_lengths: Sequence[int],
) -> float:
    """Training FLOPs of an encoder-decoder on sentence pairs of these lengths (padding
    excluded): a source token through the encoder's layers and the decoder's
    cross-attention keys and values; a target token through the decoder's layers
    (self-attention and cross-attention query and output projections, FFN) and the output
    projection; attention scores and values over the sentence's own length (encoder,
    decoder self-attention) and its source's (cross-attention)."""
    encoder = encoder_flops_per_token(
        layers=encoder_layers, hidden=hidden, intermediate=encoder_intermediate, context=0
    )
    cross_keys_values = 6.0 * decoder_layers * 2 * hidden * hidden
    decoder = encoder_flops_per_token(
        layers=decoder_layers,
        hidden=hidden,
        intermediate=decoder_intermediate,
        context=0,
        attention_matrices=6,
        head_params=target_vocab * hidden,
    )
    source = np.asarray(source_lengths, dtype=np.float64)
    target = np.asarray(target_lengths, dtype=np.float64)
    attention = (
        12.0 * hidden * (encoder_layers * source**2 + decoder_layers * target * (target + source))
    )
    per_pair = (encoder + cross_keys_values) * source + decoder * target + attention
    return float(per_pair.sum())
