"""Training one translation model (one seed) with early stopping on dev chrF.

Output folder of one run::

    model/          the model with the best dev chrF so far (``save_pretrained``)
    checkpoint.pt   the training state at the last evaluation (removed when the run ends)
    train_log.csv   one row per evaluation (columns ``LOG_COLUMNS``)
    train.json      settings and summary, written last: the run's completion marker

The loop runs on the shared core (:mod:`tokstudy.training.core`): a rerun after a kill
resumes from the checkpoint (batches depend only on ``(seed, epoch)`` and the torch RNG
is restored, so it ends with the same weights and log as an uninterrupted run).

A step is one token-budget batch; epochs reshuffle with ``(seed, epoch)``. Every
``eval_every`` steps (and at ``max_steps``) the dev sources are translated, detokenized
and scored; training stops after ``patience`` evaluations without a better dev chrF.
``tokens_per_s`` counts source and target tokens (padding excluded) over training time
only, evaluation excluded.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from tokstudy.nmt.batching import collate, encode_pairs, shared_special_ids, token_batches
from tokstudy.nmt.config import DecodeConfig, TrainConfig
from tokstudy.nmt.decode import encode_sources, translate
from tokstudy.nmt.model import build_model, label_smoothed_loss, optimizer_and_schedule
from tokstudy.nmt.scoring import corpus_scores, detokenize
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.training.checkpoint import settings_fingerprint
from tokstudy.training.config import to_dict
from tokstudy.training.core import EarlyStopping, Throughput, TrainingRun, save_atomically
from tokstudy.training.data_fit import data_facts
from tokstudy.training.device import describe, resolve_device

log = logging.getLogger(__name__)

MODEL_DIR = "model"
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
#: settings that do not change the trained weights (left out of the checkpoint fingerprint)
NON_TRAINING_KEYS = frozenset({"device", "on_missing_gpu"})


@dataclass
class Window:
    """Training loss and NLL since the last evaluation."""

    loss: float = 0.0
    nll: float = 0.0
    target_tokens: int = 0

    def add(self, loss: float, nll: float, target_tokens: int) -> None:
        """Count one training step."""
        self.loss += loss
        self.nll += nll
        self.target_tokens += target_tokens

    def row(self) -> dict[str, float]:
        """Per-target-token loss and NLL."""
        per_token = max(self.target_tokens, 1)
        return {"loss": self.loss / per_token, "nll": self.nll / per_token}


def epoch_batches(
    lengths: Sequence[int], max_tokens: int, seed: int
) -> Iterator[tuple[int, list[int]]]:
    """``(epoch, batch)`` for ever, each epoch's batches seeded by ``(seed, epoch)``."""
    for epoch in itertools.count():
        for batch in token_batches(lengths, max_tokens, seed=(seed, epoch)):
            yield epoch, batch


def train_step(
    run: TrainingRun, batch: dict[str, torch.Tensor], label_smoothing: float
) -> tuple[float, float, int]:
    """One optimizer update; returns summed smoothed loss, summed NLL and target tokens."""
    run.model.train()
    with run.autocast():
        logits = run.model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        ).logits
    loss, nll, target_tokens = label_smoothed_loss(logits, batch["labels"], label_smoothing)
    run.update(loss / target_tokens)
    return loss.item(), nll.item(), target_tokens


def run_fingerprint(
    config: TrainConfig,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    train_pairs: Sequence[tuple[str, str]],
    dev_pairs: Sequence[tuple[str, str]],
) -> str:
    """Hash of the settings, vocabularies and data that fix a run's weights."""
    settings = {k: v for k, v in to_dict(config).items() if k not in NON_TRAINING_KEYS}
    data = hashlib.sha256()
    for pair in itertools.chain(train_pairs, [("", "")], dev_pairs):
        data.update("\t".join(pair).encode() + b"\n")
    vocabularies = [list(tokenizer.vocab) for tokenizer in (source_tokenizer, target_tokenizer)]
    return settings_fingerprint(
        settings, data.hexdigest() + json.dumps(vocabularies, ensure_ascii=False)
    )


def train_translation_model(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    train_pairs: Sequence[tuple[str, str]],
    dev_pairs: Sequence[tuple[str, str]],
    out_dir: Path,
    config: TrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
) -> dict:
    """Train one model; the best one by dev chrF is saved in ``out_dir/model``.

    Passing the same tokenizer object for both sides makes a joint vocabulary (one
    embedding matrix for encoder, decoder and output). A rerun after a kill resumes from
    the checkpoint of the last evaluation. ``on_step(step)`` is called after each
    completed step (progress hooks, tests). Returns the summary it writes.
    """
    out_dir = Path(out_dir)
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
    run = TrainingRun(
        out_dir,
        model,
        optimizer,
        scheduler,
        device=device,
        bf16=config.bf16,
        grad_clip=config.grad_clip,
        run_fingerprint=run_fingerprint(
            config, source_tokenizer, target_tokenizer, train_pairs, dev_pairs
        ),
        log_columns=LOG_COLUMNS,
    )
    dev_decoding = DecodeConfig(
        beam_size=config.dev_beam_size,
        device=config.device,
        on_missing_gpu=config.on_missing_gpu,
        bf16=config.bf16,
    )
    parameters = sum(p.numel() for p in model.parameters())
    # the data for the model's size: the target tokens, which the loss predicts
    targets = itertools.chain.from_iterable(example.target for example in examples)
    facts = data_facts(model, np.fromiter(targets, dtype=np.int64))
    log.info(
        "training %s NMT (%d parameters) on %s: %d training pairs, %d dev pairs",
        config.preset,
        parameters,
        describe(device),
        len(examples),
        len(dev_pairs),
    )
    step, state = run.resume()
    stopping = EarlyStopping(config.patience, "dev_chrf", **state.get("early_stopping", {}))
    lengths = [example.length for example in examples]
    window, throughput = Window(), Throughput()
    start = time.perf_counter() - state.get("elapsed_s", 0.0)
    batches = itertools.islice(epoch_batches(lengths, config.max_tokens, config.seed), step, None)
    epoch = state.get("epoch", 0)
    for epoch, positions in batches:
        batch = {
            key: value.to(device)
            for key, value in collate([examples[i] for i in positions], special).items()
        }
        loss, nll, target_tokens = train_step(run, batch, config.label_smoothing)
        step += 1
        window.add(loss, nll, target_tokens)
        throughput.add(target_tokens + int(batch["attention_mask"].sum()))
        if on_step is not None:
            on_step(step)
        if step % config.eval_every and step < config.max_steps:
            continue
        tokens_per_s = throughput.per_second()
        hypotheses = translate(model, dev_sources, special, dev_decoding, device)
        scores = corpus_scores(detokenize(target_tokenizer, hypotheses), dev_references)
        row = {
            "step": step,
            "epoch": epoch,
            **window.row(),
            "lr": run.lr,
            "dev_chrf": scores["chrf"],
            "dev_bleu": scores["bleu"],
            "tokens_per_s": tokens_per_s,
            "elapsed_s": time.perf_counter() - start,
        }
        run.log.append(row)
        log.info(
            "step %(step)d (epoch %(epoch)d): loss %(loss).3f, nll %(nll).3f, "
            "dev chrF %(dev_chrf).2f, BLEU %(dev_bleu).2f, %(tokens_per_s).0f tokens/s",
            row,
        )
        if stopping.update(row):
            save_atomically(model.save_pretrained, out_dir / MODEL_DIR)
        if stopping.stop or step >= config.max_steps:
            break
        run.checkpoint(
            step,
            epoch=epoch,
            early_stopping=stopping.state(),
            elapsed_s=time.perf_counter() - start,
        )
        window = Window()
        throughput.restart()
    best = stopping.best
    summary = {
        "config": to_dict(config),
        "device": describe(device),
        "parameters": parameters,
        **facts,
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
    run.finish()
    log.info("best dev chrF %.2f at step %d", best["dev_chrf"], best["step"])
    return summary
