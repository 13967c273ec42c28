"""The translation model, its loss and its learning-rate schedule.

The model is a ``transformers`` Marian encoder–decoder built from scratch: the Transformer
of Vaswani et al. (post-norm, sinusoidal positions, embeddings scaled by √d_model, ReLU
feed-forward) with the target embedding tied to the output projection, separate source and
target vocabularies (or one shared matrix for a joint tokenizer), and ``generate`` for
KV-cached beam search with a length penalty. A hand-written ``torch.nn.Transformer`` would
need its own positions, incremental decoding and beam search; Marian has all of them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import MarianConfig, MarianMTModel

from tokstudy.errors import TokstudyError
from tokstudy.nmt.batching import IGNORE_INDEX, SpecialIds
from tokstudy.nmt.config import PRESETS

#: sinusoidal positions computed (no parameters); longer sources are truncated
MAX_POSITIONS = 1024


def build_model(
    preset: str,
    source_vocab_size: int,
    target_vocab_size: int,
    special: SpecialIds,
    *,
    joint: bool,
    dropout: float,
) -> MarianMTModel:
    """A freshly initialised Transformer of size ``preset`` (``tiny`` or ``base``).

    ``joint``: source and target share one vocabulary and one embedding matrix.
    """
    if joint and source_vocab_size != target_vocab_size:
        raise TokstudyError(
            f"joint vocabulary: source and target sizes differ "
            f"({source_vocab_size} vs {target_vocab_size})"
        )
    size = PRESETS[preset]
    config = MarianConfig(
        vocab_size=source_vocab_size,
        decoder_vocab_size=target_vocab_size,
        share_encoder_decoder_embeddings=joint,
        tie_word_embeddings=True,
        d_model=size["d_model"],
        encoder_layers=size["layers"],
        decoder_layers=size["layers"],
        encoder_attention_heads=size["heads"],
        decoder_attention_heads=size["heads"],
        encoder_ffn_dim=size["ffn"],
        decoder_ffn_dim=size["ffn"],
        activation_function="relu",
        dropout=dropout,
        attention_dropout=0.0,
        activation_dropout=0.0,
        scale_embedding=True,
        max_position_embeddings=MAX_POSITIONS,
        pad_token_id=special.pad,
        bos_token_id=special.bos,
        decoder_start_token_id=special.bos,
        eos_token_id=special.eos,
        forced_eos_token_id=None,
    )
    return MarianMTModel(config)


def check_vocab_sizes(model: MarianMTModel, source_size: int, target_size: int) -> None:
    """A clear error when a saved model does not fit the tokenizers it is used with."""
    config = model.config
    expected = (config.vocab_size, config.decoder_vocab_size or config.vocab_size)
    if expected != (source_size, target_size):
        raise TokstudyError(
            f"model vocabularies {expected[0]}/{expected[1]} (source/target) do not match "
            f"the tokenizers' {source_size}/{target_size}: wrong tokenizer folders?"
        )


def label_smoothed_loss(
    logits: torch.Tensor, labels: torch.Tensor, epsilon: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Summed label-smoothed cross-entropy, summed NLL (no gradient) and the token count
    (a tensor: no host-device synchronisation, no graph break under ``torch.compile``).

    Smoothing spreads ``epsilon`` uniformly over the vocabulary: per token
    ``(1 − ε)·(−log p_y) + ε·mean_k(−log p_k)``. Labels equal to ``IGNORE_INDEX`` are padding.
    """
    flat_logits = logits.float().reshape(-1, logits.shape[-1])
    flat_labels = labels.reshape(-1)
    loss = F.cross_entropy(
        flat_logits,
        flat_labels,
        ignore_index=IGNORE_INDEX,
        label_smoothing=epsilon,
        reduction="sum",
    )
    with torch.no_grad():
        nll = F.cross_entropy(flat_logits, flat_labels, ignore_index=IGNORE_INDEX, reduction="sum")
    return loss, nll, (flat_labels != IGNORE_INDEX).sum()
