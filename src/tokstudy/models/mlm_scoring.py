"""Masked-LM scoring of held-out text: pseudo-log-likelihood and derived metrics.

Every unit (subword token, or word for CharacterBERT) of a line is masked in turn and
scored by the model (Salazar et al., 2020); the masked copies of many lines are batched.
Lines longer than ``max_length - 2`` units are scored in consecutive windows, so every
unit of every line counts and a line's characters are all covered.

Metrics over a set of lines (natural-log NLL summed over all units):

* ``pseudo_perplexity`` = exp(NLL / units) — per unit, so not comparable across tokenizers
* ``bits_per_char`` = NLL / ln 2 / characters (characters of the stripped lines, spaces
  included) — comparable across tokenizers
* ``pll_per_word`` = −NLL / words (whitespace-separated words) — comparable too
* ``unk_rate`` = share of units whose target is ``[UNK]`` (an ``[UNK]`` target is easy to
  predict, so a tokenizer with many of them looks better than it is)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from tokstudy.runtime.progress import progress
from tokstudy.training.device import autocast

log = logging.getLogger(__name__)

SCORE_COLUMNS = ("line", "units", "chars", "words", "unk", "nll")


@dataclass(frozen=True)
class MaskedLine:
    """One line as model inputs and MLM targets (one entry per unit)."""

    inputs: np.ndarray  # (units, *feature)
    targets: np.ndarray  # (units,)


class MaskedLMScorer:
    """What every scorer holds: model, tokenizer, window length, device and precision.

    Subclasses set the special units ``cls``, ``sep``, ``mask``, ``pad`` and define
    ``encode(lines)`` and ``logits(inputs, attention_mask)``.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_length: int = 128,
        device: torch.device | None = None,
        bf16: bool = True,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_units = max_length - 2
        self.device = device or torch.device("cpu")
        self.bf16 = bf16
        self.unk_id = tokenizer.unk_token_id


class BertScorer(MaskedLMScorer):
    """Scores text with a ``transformers`` masked-LM and its tokenizer."""

    def __init__(self, model: Any, tokenizer: Any, **settings: Any) -> None:
        super().__init__(model, tokenizer, **settings)
        self.cls = np.int64(tokenizer.cls_token_id)
        self.sep = np.int64(tokenizer.sep_token_id)
        self.mask = np.int64(tokenizer.mask_token_id)
        self.pad = np.int64(tokenizer.pad_token_id)

    def encode(self, lines: Sequence[str]) -> list[MaskedLine]:
        """Token ids of each line (no special tokens)."""
        encoded = self.tokenizer(
            list(lines), add_special_tokens=False, return_attention_mask=False
        )["input_ids"]
        return [MaskedLine(np.asarray(ids, np.int64), np.asarray(ids, np.int64)) for ids in encoded]

    def logits(self, inputs: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Model logits (batch, length, vocabulary)."""
        return self.model(input_ids=inputs, attention_mask=attention_mask).logits


def score_lines(scorer: Any, lines: Sequence[str], batch_size: int = 64) -> pd.DataFrame:
    """Per-line totals: units, characters, words, ``[UNK]`` targets and NLL (nats).

    ``scorer`` provides ``encode``, ``logits``, ``max_units``, ``device``, ``bf16`` and the
    ``cls``/``sep``/``mask``/``pad`` inputs (see :class:`BertScorer`).
    """
    encoded = scorer.encode(lines)
    windows: list[tuple[int, np.ndarray, np.ndarray]] = []
    for index, enc in enumerate(encoded):
        for start in range(0, len(enc.targets), scorer.max_units):
            stop = start + scorer.max_units
            framed = np.concatenate([scorer.cls[None], enc.inputs[start:stop], scorer.sep[None]])
            windows.append((index, framed, enc.targets[start:stop]))
    windows.sort(key=lambda w: -len(w[2]))
    # one masked copy per (window, position): positions are 1-based inside the frame
    copies = [(w, p) for w, (_, _, targets) in enumerate(windows) for p in range(len(targets))]
    nll = np.zeros(len(lines), dtype=np.float64)
    model_was_training = getattr(scorer.model, "training", False)
    scorer.model.eval()
    bar = progress(len(copies), "scoring masked positions", log, unit="position")
    with bar, torch.inference_mode():
        for first in range(0, len(copies), batch_size):
            batch = copies[first : first + batch_size]
            logprobs = _masked_logprobs(scorer, windows, batch)
            np.add.at(nll, [windows[w][0] for w, _ in batch], -logprobs)
            bar.update(len(batch))
    if model_was_training:
        scorer.model.train()
    unk_id = scorer.unk_id
    return pd.DataFrame(
        {
            "line": np.arange(len(lines)),
            "units": [len(e.targets) for e in encoded],
            "chars": [len(line) for line in lines],
            "words": [len(line.split()) for line in lines],
            "unk": [int(np.sum(e.targets == unk_id)) for e in encoded],
            "nll": nll,
        },
        columns=list(SCORE_COLUMNS),
    )


def _masked_logprobs(scorer: Any, windows: list, batch: list[tuple[int, int]]) -> np.ndarray:
    """Log-probability of each copy's masked target."""
    length = max(len(windows[w][1]) for w, _ in batch)
    feature = windows[batch[0][0]][1].shape[1:]
    inputs = np.empty((len(batch), length, *feature), dtype=np.int64)
    inputs[:] = scorer.pad
    attention = np.zeros((len(batch), length), dtype=np.int64)
    targets = np.empty(len(batch), dtype=np.int64)
    for row, (w, position) in enumerate(batch):
        framed = windows[w][1]
        inputs[row, : len(framed)] = framed
        inputs[row, position + 1] = scorer.mask
        attention[row, : len(framed)] = 1
        targets[row] = windows[w][2][position]
    positions = torch.tensor([p + 1 for _, p in batch], device=scorer.device)
    with autocast(scorer.device, scorer.bf16):
        logits = scorer.logits(
            torch.from_numpy(inputs).to(scorer.device),
            torch.from_numpy(attention).to(scorer.device),
        )
    picked = logits[torch.arange(len(batch), device=scorer.device), positions].float()
    logprobs = torch.log_softmax(picked, dim=-1)
    target_t = torch.from_numpy(targets).to(scorer.device)
    return logprobs.gather(1, target_t[:, None])[:, 0].cpu().numpy().astype(np.float64)


def mlm_metrics(scores: pd.DataFrame) -> dict[str, float]:
    """Corpus-level metrics from :func:`score_lines` rows (see the module docstring)."""
    units, chars, words = (float(scores[c].sum()) for c in ("units", "chars", "words"))
    nll = float(scores["nll"].sum())
    return {
        "lines": float(len(scores)),
        "units": units,
        "chars": chars,
        "words": words,
        "nll": nll,
        "pseudo_perplexity": math.exp(nll / units) if units else math.nan,
        "bits_per_char": nll / math.log(2) / chars if chars else math.nan,
        "pll_per_word": -nll / words if words else math.nan,
        "unk_rate": float(scores["unk"].sum()) / units if units else math.nan,
    }
