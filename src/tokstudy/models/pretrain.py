"""Masked-LM pretraining: a plain torch loop with logging, checkpoints and resume.

Output folder of one run::

    checkpoint.pt     last checkpoint (removed when the run completes)
    train_log.csv     step, loss, lr, tokens_per_s, elapsed_s every ``log_every`` steps
    model/            the trained model (``save_pretrained`` for BERT)
    pretrain.json     settings and summary, written last: the run's completion marker

Rerunning after a kill resumes from ``checkpoint.pt``; the batches and masking of each
step depend only on ``(seed, step)`` and the torch RNG (dropout) is restored, so the
resumed run ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from transformers import BertConfig, BertForMaskedLM, get_linear_schedule_with_warmup

from tokstudy.errors import TokstudyError
from tokstudy.models.checkpoint import (
    load_checkpoint,
    restore_rng_states,
    rng_states,
    save_checkpoint,
)
from tokstudy.models.config import PRESETS, PretrainConfig, to_dict
from tokstudy.models.data import BlockSampler, TokenCorpus, gather_blocks, with_cls_sep
from tokstudy.models.device import autocast, describe, resolve_device
from tokstudy.models.masking import Masker

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.pt"
LOG_FILE = "train_log.csv"
MODEL_DIR = "model"
SUMMARY_FILE = "pretrain.json"
LOG_COLUMNS = ("step", "loss", "lr", "tokens_per_s", "elapsed_s")

#: settings that do not change the trained weights (left out of the checkpoint fingerprint)
NON_TRAINING_KEYS = frozenset({"checkpoint_every", "log_every", "on_bad_checkpoint", "device"})


class BatchSource(Protocol):
    """Model inputs (including ``labels``) for a training step."""

    def __call__(self, step: int) -> dict[str, torch.Tensor]: ...


LossFn = Callable[[torch.nn.Module, dict[str, torch.Tensor]], torch.Tensor]


def bert_mlm_loss(model: BertForMaskedLM, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``model(**batch).loss``, with the output layer run on the masked positions only.

    The vocabulary projection of every position is what dominates small models' cost;
    only the ~15 % masked positions have a loss, so the others are skipped.
    """
    labels = batch["labels"]
    chosen = labels != -100
    hidden = model.bert(input_ids=batch["input_ids"]).last_hidden_state[chosen]
    logits = model.cls(hidden)
    return torch.nn.functional.cross_entropy(logits.float(), labels[chosen])


@dataclass
class TrainResult:
    """What a finished run reports."""

    steps: int
    final_loss: float
    tokens_per_s: float
    device: str


def bert_config(tokenizer: Any, config: PretrainConfig) -> BertConfig:
    """A BERT configuration of ``config.preset`` for ``tokenizer``'s vocabulary."""
    return BertConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=config.max_length,
        pad_token_id=tokenizer.pad_token_id,
        hidden_dropout_prob=config.dropout,
        attention_probs_dropout_prob=config.dropout,
        attn_implementation="sdpa",
        **PRESETS[config.preset],
    )


class BertBatches:
    """MLM batches of ``[CLS] block [SEP]`` drawn from a memory-mapped corpus."""

    def __init__(self, corpus: TokenCorpus, tokenizer: Any, config: PretrainConfig) -> None:
        if config.whole_word_mask and "char_spans" not in corpus.arrays:
            raise TokstudyError(
                f"{corpus.directory}: whole_word_mask needs a corpus pre-tokenized with "
                "character spans (pretokenize(..., with_char_spans=True))"
            )
        self.corpus = corpus
        self.block_len = config.max_length - 2
        self.sampler = BlockSampler(corpus.n_tokens, self.block_len, config.batch_size, config.seed)
        self.masker = Masker(
            tokenizer,
            mlm_probability=config.mlm_probability,
            mask_replace_prob=config.mask_replace_prob,
            random_replace_prob=config.random_replace_prob,
            whole_word_mask=config.whole_word_mask,
            seed=config.seed,
        )
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.whole_word_mask = config.whole_word_mask

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        starts = self.sampler.starts(step)
        blocks = gather_blocks(self.corpus.ids, starts, self.block_len)
        framed = with_cls_sep(blocks, self.cls_id, self.sep_id)
        input_ids = torch.from_numpy(framed.astype(np.int64))
        spans = None
        if self.whole_word_mask:
            spans = gather_blocks(self.corpus.arrays["char_spans"], starts, self.block_len)
            spans = with_cls_sep(spans, (0, 0), (0, 0))
        masked, labels = self.masker(input_ids, step, spans)
        return {"input_ids": masked, "labels": labels}


def fingerprint(config: PretrainConfig, extra: str = "") -> str:
    """Hash of the settings that determine the trained weights."""
    settings = {k: v for k, v in to_dict(config).items() if k not in NON_TRAINING_KEYS}
    text = json.dumps(settings, sort_keys=True) + extra
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_optimizer(
    model: torch.nn.Module, config: PretrainConfig, total_steps: int, warmup_steps: int
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """AdamW (no weight decay on biases and LayerNorm) with linear warm-up and decay."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if param.ndim < 2 or "LayerNorm" in name else decay).append(param)
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=config.lr,
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    return optimizer, scheduler


def train_loop(
    model: torch.nn.Module,
    batches: BatchSource,
    config: PretrainConfig,
    out_dir: Path,
    *,
    device: torch.device,
    run_fingerprint: str,
    loss_fn: LossFn,
    on_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Train ``model`` for ``config.steps`` steps, resuming from ``out_dir``'s checkpoint.

    ``loss_fn(model, batch)`` gives the batch's loss; ``on_step(step)`` is called after
    each completed step (progress hooks, tests).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    model.to(device)
    optimizer, scheduler = build_optimizer(
        model, config, config.steps, min(config.warmup_steps, config.steps)
    )
    start = _resume(out_dir / CHECKPOINT_FILE, run_fingerprint, config, model, optimizer, scheduler)
    log_path = out_dir / LOG_FILE
    _truncate_log(log_path, start)
    model.train()
    running_loss = torch.zeros((), device=device)
    interval_tokens, interval_steps = 0, 0
    interval_start = run_start = time.perf_counter()
    last_loss, total_tokens = float("nan"), 0
    for step in range(start, config.steps):
        batch = {key: value.to(device, non_blocking=True) for key, value in batches(step).items()}
        with autocast(device, config.bf16):
            loss = loss_fn(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        running_loss += loss.detach().float()
        interval_tokens += batch["labels"].numel()
        interval_steps += 1
        done = step + 1
        if done % config.log_every == 0 or done == config.steps:
            last_loss = running_loss.item() / interval_steps
            now = time.perf_counter()
            rate = interval_tokens / max(now - interval_start, 1e-9)
            lr = scheduler.get_last_lr()[0]
            row = (done, last_loss, lr, rate, now - run_start)
            _append_log(log_path, row)
            log.info("step %d/%d loss %.4f lr %.2e %.0f tokens/s", done, config.steps, *row[1:4])
            total_tokens += interval_tokens
            running_loss.zero_()
            interval_tokens, interval_steps, interval_start = 0, 0, now
        if done % config.checkpoint_every == 0 and done < config.steps:
            _save(out_dir / CHECKPOINT_FILE, done, run_fingerprint, model, optimizer, scheduler)
        if on_step is not None:
            on_step(done)
    elapsed = time.perf_counter() - run_start
    return TrainResult(config.steps, last_loss, total_tokens / max(elapsed, 1e-9), describe(device))


def _save(path: Path, step: int, run_fingerprint: str, model, optimizer, scheduler) -> None:
    save_checkpoint(
        path,
        {
            "step": step,
            "fingerprint": run_fingerprint,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": rng_states(),
        },
    )


def _resume(path: Path, run_fingerprint: str, config: PretrainConfig, model, optimizer, scheduler):
    """Load ``path`` into the training objects; the step to continue from (0: fresh)."""
    if not path.exists():
        return 0
    try:
        state = load_checkpoint(path, run_fingerprint)
    except TokstudyError as err:
        if config.on_bad_checkpoint == "error":
            raise
        log.warning("%s; ignoring it and training from step 0", err)
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    restore_rng_states(state["rng"])
    log.info("resuming from %s at step %d", path, state["step"])
    return int(state["step"])


def _truncate_log(path: Path, step: int) -> None:
    """Keep the log rows up to ``step`` (rows a killed run wrote after its checkpoint go)."""
    if step == 0 or not path.exists():
        path.write_text(",".join(LOG_COLUMNS) + "\n", encoding="utf-8")
        return
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if int(row["step"]) <= step]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=LOG_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _append_log(path: Path, row: tuple) -> None:
    with path.open("a", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerow(row)


def finish_run(
    out_dir: Path,
    save_model: Callable[[Path], None],
    summary: dict[str, Any],
) -> Path:
    """Save the model atomically, write the summary marker, drop the checkpoint."""
    model_dir = out_dir / MODEL_DIR
    tmp = out_dir / (MODEL_DIR + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(tmp)
    shutil.rmtree(model_dir, ignore_errors=True)
    os.replace(tmp, model_dir)
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    (out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)
    return model_dir


def pretrain_bert(
    tokenizer: Any,
    corpus_dir: Path,
    out_dir: Path,
    config: PretrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
) -> Path:
    """Pretrain a BERT masked-LM on a pre-tokenized corpus; the saved model folder."""
    out_dir = Path(out_dir)
    corpus = TokenCorpus.open(corpus_dir)
    if corpus.meta["vocab_size"] != len(tokenizer):
        raise TokstudyError(
            f"{corpus_dir}: corpus vocabulary size {corpus.meta['vocab_size']} does not match "
            f"the tokenizer's {len(tokenizer)}"
        )
    device = resolve_device(config.device, config.on_missing_gpu)
    torch.manual_seed(config.seed)
    model = BertForMaskedLM(bert_config(tokenizer, config))
    batches = BertBatches(corpus, tokenizer, config)
    result = train_loop(
        model,
        batches,
        config,
        out_dir,
        device=device,
        run_fingerprint=fingerprint(config, corpus.meta["fingerprint"]),
        loss_fn=bert_mlm_loss,
        on_step=on_step,
    )
    summary = {
        "architecture": "bert",
        "config": to_dict(config),
        "corpus": str(corpus_dir),
        "corpus_fingerprint": corpus.meta["fingerprint"],
        "parameters": sum(p.numel() for p in model.parameters()),
        **result.__dict__,
    }
    return finish_run(out_dir, model.save_pretrained, summary)
