"""Fine-tuning a pretrained BERT MLM on POS tagging and sentence classification.

POS tagging (``BertForTokenClassification``): each word is tokenized on its own, the
first subword carries the word's label and the others ``-100``. Sentences longer than
``max_length - 2`` subwords are cut into consecutive chunks of whole words, so every
word gets a prediction. Sentence classification (``BertForSequenceClassification``)
truncates texts to ``max_length`` tokens. A CharacterBERT model gets the same examples
with a word's character-id row as its unit (see
:class:`tokstudy.models.charbert.SpellingTokenizer`), so every word is one unit.

Training: AdamW with linear warm-up/decay, one seed per call; after each epoch the
validation macro-F1 is computed and the best epoch's weights are used on the test set.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tokstudy.models.classification_scores import macro_f1
from tokstudy.models.config import FinetuneConfig
from tokstudy.runtime.progress import progress
from tokstudy.training.device import autocast, resolve_device
from tokstudy.training.optimizer import build_optimizer

log = logging.getLogger(__name__)

IGNORE = -100

#: one input unit: a token id, or a CharacterBERT word's character ids
Unit = int | tuple[int, ...]


@dataclass(frozen=True)
class Example:
    """Model inputs of one training example; ``labels`` per token, or one class id."""

    input_ids: list[Unit]
    labels: list[int] | int
    #: index of the sentence this example (or chunk) comes from
    source: int


def tagging_examples(
    tokenizer: Any,
    sentences: Sequence[Sequence[str]],
    tags: Sequence[Sequence[int]],
    max_length: int,
) -> list[Example]:
    """First-subword-labelled examples for word-tagged sentences (chunked when long)."""
    examples = []
    limit = max_length - 2
    for index, (words, labels) in enumerate(zip(sentences, tags, strict=True)):
        if not words:
            continue
        pieces = tokenizer(list(words), add_special_tokens=False)["input_ids"]
        ids: list[Unit] = []
        token_labels: list[int] = []
        for word_pieces, label in zip(pieces, labels, strict=True):
            word_pieces = (word_pieces or [tokenizer.unk_token_id])[:limit]
            if len(ids) + len(word_pieces) > limit:
                examples.append(_framed(tokenizer, ids, token_labels, index))
                ids, token_labels = [], []
            ids.extend(word_pieces)
            token_labels.extend([label] + [IGNORE] * (len(word_pieces) - 1))
        examples.append(_framed(tokenizer, ids, token_labels, index))
    return examples


def _framed(tokenizer: Any, ids: list[Unit], labels: list[int], source: int) -> Example:
    return Example(
        [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id], [IGNORE, *labels, IGNORE], source
    )


def sentence_examples(
    tokenizer: Any, texts: Sequence[str], labels: Sequence[int], max_length: int
) -> list[Example]:
    """``[CLS] text [SEP]`` examples (cut to ``max_length``) with one class id each.

    Special tokens are added here, not by the tokenizer (whose post-processing varies).
    """
    encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [
        Example(
            [tokenizer.cls_token_id, *ids[: max_length - 2], tokenizer.sep_token_id], int(label), i
        )
        for i, (ids, label) in enumerate(zip(encoded, labels, strict=True))
    ]


def collate(examples: Sequence[Example], pad_id: Unit) -> dict[str, torch.Tensor]:
    """Pad a batch of examples into tensors (``input_ids``: batch × units × unit shape)."""
    length = max(len(e.input_ids) for e in examples)
    pad = torch.tensor(pad_id, dtype=torch.long)
    input_ids = pad.expand(len(examples), length, *pad.shape).clone()
    attention = torch.zeros((len(examples), length), dtype=torch.long)
    per_token = isinstance(examples[0].labels, list)
    labels = (
        torch.full((len(examples), length), IGNORE, dtype=torch.long)
        if per_token
        else torch.tensor([e.labels for e in examples], dtype=torch.long)
    )
    for row, example in enumerate(examples):
        n = len(example.input_ids)
        input_ids[row, :n] = torch.tensor(example.input_ids)
        attention[row, :n] = 1
        if per_token:
            labels[row, :n] = torch.tensor(example.labels)
    return {"input_ids": input_ids, "attention_mask": attention, "labels": labels}


def predict(
    model: Any,
    examples: Sequence[Example],
    *,
    pad_id: Unit,
    batch_size: int,
    device: torch.device,
    bf16: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Gold and predicted label ids of every labelled position (or example)."""
    model.eval()
    gold, pred = [], []
    with torch.inference_mode():
        for first in range(0, len(examples), batch_size):
            batch = collate(examples[first : first + batch_size], pad_id)
            labels = batch.pop("labels")
            with autocast(device, bf16):
                logits = model(**{k: v.to(device) for k, v in batch.items()}).logits
            predicted = logits.argmax(dim=-1).cpu()
            keep = labels != IGNORE
            gold.append(labels[keep].numpy())
            pred.append(predicted[keep].numpy())
    return np.concatenate(gold), np.concatenate(pred)


@dataclass
class FinetuneResult:
    """The best-on-validation model and its scores."""

    model: Any
    best_epoch: int
    validation_macro_f1: float


def finetune(
    model: Any,
    train: Sequence[Example],
    validation: Sequence[Example],
    config: FinetuneConfig,
    *,
    pad_id: Unit,
) -> FinetuneResult:
    """Train ``model`` for ``config.epochs`` epochs; keep the best epoch on validation."""
    device = resolve_device(config.device, config.on_missing_gpu)
    model.to(device)
    steps_per_epoch = -(-len(train) // config.batch_size)
    total = steps_per_epoch * config.epochs
    optimizer, scheduler = build_optimizer(
        model,
        config.lr,
        config.weight_decay,
        steps=total,
        warmup_steps=round(config.warmup_ratio * total),
    )
    order_rng = np.random.default_rng(config.seed)
    best = (-1.0, 0, copy.deepcopy(model.state_dict()))
    bar = progress(total, "fine-tuning", log, unit="step")
    for epoch in range(1, config.epochs + 1):
        model.train()
        order = order_rng.permutation(len(train))
        for first in range(0, len(train), config.batch_size):
            batch = collate([train[i] for i in order[first : first + config.batch_size]], pad_id)
            with autocast(device, config.bf16):
                loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            bar.update(1)
        gold, pred = predict(
            model,
            validation,
            pad_id=pad_id,
            batch_size=config.batch_size,
            device=device,
            bf16=config.bf16,
        )
        score = macro_f1(gold, pred)
        log.info("epoch %d: loss %.4f, validation macro-F1 %.4f", epoch, loss.item(), score)
        if score > best[0]:
            best = (score, epoch, copy.deepcopy(model.state_dict()))
    bar.close()
    model.load_state_dict(best[2])
    return FinetuneResult(model, best[1], best[0])
