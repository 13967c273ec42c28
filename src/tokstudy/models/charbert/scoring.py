"""Masked-LM scoring with CharacterBERT (units are whitespace words)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from tokstudy.models.charbert.model import CharacterBertForMaskedLM
from tokstudy.models.charbert.spelling import Speller
from tokstudy.models.mlm_scoring import MaskedLine, MaskedLMScorer
from tokstudy.tokenizers.base import CLS, MASK, PAD, SEP


class CharBertScorer(MaskedLMScorer):
    """Scores text with CharacterBERT (see :func:`tokstudy.models.mlm_scoring.score_lines`).

    Units are whitespace words; targets outside the word vocabulary are ``[UNK]``.
    """

    def __init__(
        self, model: CharacterBertForMaskedLM, tokenizer: Any, speller: Speller, **settings: Any
    ) -> None:
        super().__init__(model, tokenizer, **settings)
        self.speller = speller
        self.cls, self.sep, self.mask, self.pad = (
            speller.spell(token).astype(np.int64) for token in (CLS, SEP, MASK, PAD)
        )

    def encode(self, lines: list[str]) -> list[MaskedLine]:
        """Spellings and word ids of each line's words."""
        encoded = []
        for line in lines:
            words = line.split()
            ids = np.asarray(self.tokenizer.convert_tokens_to_ids(words), dtype=np.int64)
            encoded.append(MaskedLine(self.speller.spell_all(words).astype(np.int64), ids))
        return encoded

    def logits(self, inputs: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Word-vocabulary logits (batch, words, vocabulary)."""
        return self.model(char_ids=inputs, attention_mask=attention_mask).logits
