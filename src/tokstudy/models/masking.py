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
