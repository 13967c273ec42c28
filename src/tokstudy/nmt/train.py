"""Training one translation model (one seed) with early stopping on dev chrF.

Output folder of one run::

    model/          the model with the best dev chrF so far (``save_pretrained``)
    train_log.csv   one row per evaluation (columns ``LOG_COLUMNS``)
    train.json      settings and summary, written last: the run's completion marker

A step is one token-budget batch; epochs reshuffle with ``(seed, epoch)``. Every
``eval_every`` steps (and at ``max_steps``) the dev sources are translated, detokenized
and scored; training stops after ``patience`` evaluations without a better dev chrF.
``tokens_per_s`` counts source and target tokens (padding excluded) over training time
only, evaluation excluded.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from tokstudy.models.config import to_dict
from tokstudy.models.device import autocast, describe, resolve_device
from tokstudy.nmt.batching import collate, encode_pairs, shared_special_ids, token_batches
from tokstudy.nmt.config import DecodeConfig, TrainConfig
from tokstudy.nmt.decode import encode_sources, translate
from tokstudy.nmt.model import build_model, label_smoothed_loss, optimizer_and_schedule
from tokstudy.nmt.scoring import corpus_scores, detokenize
from tokstudy.tokenizers.base import Tokenizer

log = logging.getLogger(__name__)

MODEL_DIR = "model"
LOG_FILE = "train_log.csv"
SUMMARY_FILE = "train.json"
LOG_COLUMNS = (
    "step",
    "epoch",
    "loss",
    "nll",
    "lr",
    "dev_chrf",
    "dev_bleu",
    "tokens_per_s",
    "elapsed_s",
)


@dataclass
class Window:
    """Training statistics since the last evaluation."""

    loss: float = 0.0
    nll: float = 0.0
    target_tokens: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def add(
        self, loss: float, nll: float, target_tokens: int, source_tokens: int, seconds: float
    ) -> None:
        """Count one training step."""
        self.loss += loss
        self.nll += nll
        self.target_tokens += target_tokens
        self.tokens += target_tokens + source_tokens
        self.seconds += seconds

    def row(self) -> dict[str, float]:
        """Per-target-token loss and NLL, and tokens per second."""
        per_token = max(self.target_tokens, 1)
        return {
            "loss": self.loss / per_token,
            "nll": self.nll / per_token,
            "tokens_per_s": self.tokens / self.seconds if self.seconds else 0.0,
        }


def epoch_batches(
    lengths: Sequence[int], max_tokens: int, seed: int
) -> Iterator[tuple[int, list[int]]]:
    """``(epoch, batch)`` for ever, each epoch's batches seeded by ``(seed, epoch)``."""
    for epoch in itertools.count():
        for batch in token_batches(lengths, max_tokens, seed=(seed, epoch)):
            yield epoch, batch


def train_step(
    model: torch.nn.Module,
    batch: dict[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    config: TrainConfig,
    device: torch.device,
) -> tuple[float, float, int]:
    """One optimizer update; returns summed smoothed loss, summed NLL and target tokens."""
    model.train()
    with autocast(device, config.bf16):
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        ).logits
    loss, nll, target_tokens = label_smoothed_loss(logits, batch["labels"], config.label_smoothing)
    (loss / target_tokens).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item(), nll.item(), target_tokens


def train_translation_model(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    train_pairs: Sequence[tuple[str, str]],
    dev_pairs: Sequence[tuple[str, str]],
    out_dir: Path,
    config: TrainConfig,
) -> dict:
    """Train one model; the best one by dev chrF is saved in ``out_dir/model``.

    Passing the same tokenizer object for both sides makes a joint vocabulary (one
    embedding matrix for encoder, decoder and output). Returns the summary it writes.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    device = resolve_device(config.device, config.on_missing_gpu)
    special = shared_special_ids(source_tokenizer, target_tokenizer)
    joint = source_tokenizer is target_tokenizer
    examples = encode_pairs(
        source_tokenizer, target_tokenizer, train_pairs, special, config.max_length
    )
    dev_sources = encode_sources(source_tokenizer, [source for source, _ in dev_pairs], special)
    dev_references = [target for _, target in dev_pairs]
    model = build_model(
        config.preset,
        len(source_tokenizer.vocab),
        len(target_tokenizer.vocab),
        special,
        joint=joint,
        dropout=config.dropout,
    ).to(device)
    optimizer, scheduler = optimizer_and_schedule(model, config)
    dev_decoding = DecodeConfig(
        beam_size=config.dev_beam_size,
        device=config.device,
        on_missing_gpu=config.on_missing_gpu,
        bf16=config.bf16,
    )
    parameters = sum(p.numel() for p in model.parameters())
    log.info(
        "training %s NMT (%d parameters) on %s: %d training pairs, %d dev pairs",
        config.preset,
        parameters,
        describe(device),
        len(examples),
        len(dev_pairs),
    )
    lengths = [example.length for example in examples]
    window, best, evaluations_without_gain = Window(), None, 0
    start = time.perf_counter()
    step, epoch = 0, 0
    with (out_dir / LOG_FILE).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=LOG_COLUMNS)
        writer.writeheader()
        for epoch, positions in epoch_batches(lengths, config.max_tokens, config.seed):
            tick = time.perf_counter()
            batch = {
                key: value.to(device)
                for key, value in collate([examples[i] for i in positions], special).items()
            }
            loss, nll, target_tokens = train_step(model, batch, optimizer, config, device)
            scheduler.step()
            step += 1
            source_tokens = int(batch["attention_mask"].sum())
            window.add(loss, nll, target_tokens, source_tokens, time.perf_counter() - tick)
            if step % config.eval_every and step < config.max_steps:
                continue
            hypotheses = translate(model, dev_sources, special, dev_decoding, device)
            scores = corpus_scores(detokenize(target_tokenizer, hypotheses), dev_references)
            row = {
                "step": step,
                "epoch": epoch,
                **window.row(),
                "lr": scheduler.get_last_lr()[0],
                "dev_chrf": scores["chrf"],
                "dev_bleu": scores["bleu"],
                "elapsed_s": time.perf_counter() - start,
            }
            writer.writerow(row)
            handle.flush()
            log.info(
                "step %(step)d (epoch %(epoch)d): loss %(loss).3f, nll %(nll).3f, "
                "dev chrF %(dev_chrf).2f, BLEU %(dev_bleu).2f, %(tokens_per_s).0f tokens/s",
                row,
            )
            window = Window()
            if best is None or row["dev_chrf"] > best["dev_chrf"]:
                best, evaluations_without_gain = row, 0
                model.save_pretrained(out_dir / MODEL_DIR)
            else:
                evaluations_without_gain += 1
            if evaluations_without_gain >= config.patience or step >= config.max_steps:
                break
    summary = {
        "config": to_dict(config),
        "device": describe(device),
        "parameters": parameters,
        "joint_vocabulary": joint,
        "source_tokenizer": source_tokenizer.name,
        "target_tokenizer": target_tokenizer.name,
        "source_vocab_size": len(source_tokenizer.vocab),
        "target_vocab_size": len(target_tokenizer.vocab),
        "train_pairs": len(examples),
        "dev_pairs": len(dev_pairs),
        "steps": step,
        "epochs": epoch + 1,
        "stopped_early": step < config.max_steps,
        "best_step": best["step"],
        "best_dev_chrf": best["dev_chrf"],
        "best_dev_bleu": best["dev_bleu"],
        "dev_chrf_signature": scores["chrf_signature"],
        "seconds": time.perf_counter() - start,
    }
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    log.info("best dev chrF %.2f at step %d", best["dev_chrf"], best["step"])
    return summary
