"""Masked-LM corruption of token batches, via ``transformers``' data collator.

``DataCollatorForLanguageModeling.torch_mask_tokens`` picks ``mlm_probability`` of the
non-special tokens and replaces them by ``[MASK]`` (``mask_replace_prob``), a random token
(``random_replace_prob``) or leaves them (the rest). Control tokens ([CLS], [SEP], [PAD],
[MASK]) are never chosen; [UNK] stands for text and is. With whole-word masking the collator
masks every token of a chosen word (words from character offsets) and always uses
``[MASK]`` (it disables random replacement). The generator is re-seeded from
``(seed, step)`` for every batch, so masking is reproducible after a resume.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from transformers import DataCollatorForLanguageModeling


def step_seed(seed: int, step: int) -> int:
    """A 63-bit seed derived from a run seed and a step number."""
    return int(np.random.SeedSequence([seed, step]).generate_state(2, np.uint64)[0] >> 1)


class Masker:
    """Applies MLM masking to batches of token ids."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        mlm_probability: float = 0.15,
        mask_replace_prob: float = 0.8,
        random_replace_prob: float = 0.1,
        whole_word_mask: bool = False,
        seed: int = 0,
    ) -> None:
        with warnings.catch_warnings():
            # whole-word masking: the collator announces that it turns off 80/10/10
            warnings.simplefilter("ignore", UserWarning)
            self.collator = DataCollatorForLanguageModeling(
                tokenizer,
                mlm=True,
                whole_word_mask=whole_word_mask,
                mlm_probability=mlm_probability,
                mask_replace_prob=mask_replace_prob,
                random_replace_prob=random_replace_prob,
            )
        self.whole_word_mask = whole_word_mask
        self.seed = seed
        # [UNK] stands for text (as in Tokenizer.special_ids): it is masked and predicted
        controls = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
        self.special_ids = torch.tensor(sorted(controls), dtype=torch.long)

    def __call__(
        self, input_ids: torch.Tensor, step: int, char_spans: np.ndarray | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked inputs and labels (``-100`` where no loss) for the batch of ``step``.

        ``char_spans`` (batch, length, 2) is required with whole-word masking.
        """
        if self.whole_word_mask and char_spans is None:
            raise ValueError("whole-word masking needs the tokens' character spans")
        generator = torch.Generator().manual_seed(step_seed(self.seed, step))
        self.collator.generator = generator
        special = torch.isin(input_ids, self.special_ids)
        return self.collator.torch_mask_tokens(
            input_ids.clone(),
            special_tokens_mask=special,
            offset_mapping=char_spans if self.whole_word_mask else None,
        )


#: the batch key of the flat indices of the positions with a label (:func:`with_label_positions`)
LABEL_POSITIONS = "label_positions"


def with_label_positions(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``batch`` with ``label_positions``: the flat indices of the positions whose label is
    not ``-100``, in row-major order.

    Found on the host, before the batch goes to the device: a boolean gather of the labels
    on the device (``hidden[labels != -100]``) must wait for the device to count them, a
    host-device synchronisation every step and a graph break under ``torch.compile``.
    """
    positions = (batch["labels"].reshape(-1) != -100).nonzero().squeeze(1)
    return {**batch, LABEL_POSITIONS: positions}


def labelled(
    hidden: torch.Tensor, labels: torch.Tensor, positions: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden states (batch, length, width) and labels (batch, length) of the positions
    with a label: gathered at ``positions`` (:func:`with_label_positions`) or, without
    them, by a boolean mask of the labels. Both give the same rows in the same order."""
    if positions is None:
        chosen = labels != -100
        return hidden[chosen], labels[chosen]
    flat = hidden.reshape(-1, hidden.shape[-1])
    return flat.index_select(0, positions), labels.reshape(-1).index_select(0, positions)
