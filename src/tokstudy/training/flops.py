"""Training FLOPs per token of the study's transformers, for FLOP/s and MFU in the logs.

The usual count (Kaplan et al. 2020; PaLM, appendix B): a matmul of a token through a
``m × n`` weight costs ``2mn`` FLOPs forward and ``4mn`` backward, so ``6`` per matmul
parameter; attention scores and values add ``12 · layers · context · hidden`` (counted
in full, causal masking or not). Embedding lookups, norms and softmaxes are left out.
"""

from __future__ import annotations


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
