"""Training one decoder on the shared loop (:mod:`tokstudy.training.loop`): the corpus
cut into training and validation streams, blocks drawn per ``(seed, step)``, the
next-token loss; the run folder described in :mod:`tokstudy.models.clm`."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import LlamaForCausalLM

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import iter_nonblank_lines
from tokstudy.models.clm.model import llama_config, train_flops_per_token, training_steps
from tokstudy.models.clm.stream import LineStream, check_vocabulary
from tokstudy.models.clm.windows import LogitsModel, token_nll
from tokstudy.models.config import CLM_PRESETS, ClmConfig, to_dict
from tokstudy.models.data import BlockSampler, TokenCorpus, vocab_fingerprint
from tokstudy.models.family import load_transformers_tokenizer
from tokstudy.training import distributed
from tokstudy.training.checkpoint import checkpoint_folder, settings_fingerprint
from tokstudy.training.core import finish_run
from tokstudy.training.data_fit import data_facts
from tokstudy.training.device import describe, resolve_device
from tokstudy.training.loop import LoopSettings, TrainingTask, result_summary, train
from tokstudy.training.optimizer import build_optimizer
from tokstudy.training.run_state import MODEL_DIR, restore_outputs

log = logging.getLogger(__name__)

SUMMARY_FILE = "train.json"


class StreamBatches:
    """Blocks of ``context + 1`` tokens drawn per ``(seed, step)``: inputs and next tokens."""

    def __init__(self, stream: LineStream, config: ClmConfig) -> None:
        self.stream = stream
        self.block_len = config.context + 1
        self.sampler = BlockSampler(len(stream), self.block_len, config.batch_size, config.seed)

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        blocks = torch.from_numpy(self.stream.blocks(self.sampler.starts(step), self.block_len))
        return blocks[:, :-1], blocks[:, 1:]


def _split_corpus(corpus: TokenCorpus, train_text: Path, config: ClmConfig, eol: int) -> dict:
    """Training and validation streams (the last ``validation_lines`` lines) and the bytes
    of the training lines; the training stream stays on disk (:class:`LineStream`)."""
    lines = corpus.n_lines
    if config.validation_lines >= lines:
        raise TokstudyError(
            f"{corpus.directory}: {lines} lines do not leave training text beside "
            f"models.clm.validation_lines ({config.validation_lines})"
        )
    cut = lines - config.validation_lines
    text_lines = train_bytes = 0
    for line in iter_nonblank_lines(train_text):
        if text_lines < cut:
            train_bytes += len(line.encode("utf-8")) + 1
        text_lines += 1
    if text_lines != lines:
        raise TokstudyError(
            f"{train_text}: {text_lines} lines, but its pre-tokenized corpus has {lines}"
        )
    ids, offsets = corpus.ids, corpus.line_offsets
    return {
        "train": LineStream(ids, offsets, eol, 0, cut),
        "validation": LineStream(ids, offsets, eol, cut, lines).array(),
        "train_bytes": train_bytes,
        "train_lines": cut,
    }


def _check_fits(config: ClmConfig, vocabulary_items: int, n_blocks: int, where: str) -> None:
    """One-line errors for a vocabulary the preset cannot hold or a corpus below a batch."""
    max_vocab = CLM_PRESETS[config.preset]["max_vocab"]
    if vocabulary_items > max_vocab:
        raise TokstudyError(
            f"{where}: vocabulary of {vocabulary_items} does not fit models.clm.preset "
            f"{config.preset!r} (at most {max_vocab})"
        )
    if n_blocks < config.batch_size:
        raise TokstudyError(
            f"{where}: corpus too small: {n_blocks} blocks of models.clm.context + 1 = "
            f"{config.context + 1} tokens, fewer than one batch (models.clm.batch_size "
            f"{config.batch_size})"
        )


def _check_data(config: ClmConfig, facts: dict[str, Any], where: str) -> None:
    """A one-line error when the training text has fewer tokens per non-embedding parameter
    than ``min_tokens_per_parameter``: the preset needs more text than the corpus has."""
    needed = config.min_tokens_per_parameter
    if facts["tokens_per_parameter"] < needed:
        raise TokstudyError(
            f"{where}: {facts['training_tokens']:,} training tokens for "
            f"{facts['non_embedding_parameters']:,} non-embedding parameters of preset "
            f"{config.preset!r} ({facts['tokens_per_parameter']:.3g} per parameter), below "
            f"models.clm.min_tokens_per_parameter {needed:g} (needs "
            f"{math.ceil(needed * facts['non_embedding_parameters']):,} tokens): give the "
            "language more text, or set it to 0 to train anyway"
        )


def validation_loss(model: LogitsModel, stream: np.ndarray, config: ClmConfig, device) -> float:
    """Mean NLL (nats) per token of the validation stream, in non-overlapping windows."""
    model.eval()
    nll = token_nll(model, stream, config.context, config.context - 1, device=device)
    model.train()
    return float(nll.mean())


@distributed.per_config_devices("models.clm.devices")
def train_clm(
    tokenizer_dir: Path,
    corpus_dir: Path,
    train_text: Path,
    out_dir: Path,
    config: ClmConfig,
    *,
    on_step: Callable[[int], None] | None = None,
    checkpoint_root: Path | None = None,
) -> Path:
    """Train one decoder on the cell's pre-tokenized training text; the model folder.

    ``on_step(step)`` runs after each step (progress hooks, tests; not with several
    devices); ``checkpoint_root``: the checkpoint lives in
    ``checkpoint_root/<settings fingerprint>`` (in ``out_dir`` unless given). With
    ``devices: N > 1`` it runs in ``N`` processes (:mod:`tokstudy.training.distributed`).
    """
    out_dir = Path(out_dir)
    tokenizer = load_transformers_tokenizer(tokenizer_dir)
    check_vocabulary(tokenizer, str(tokenizer_dir))
    corpus = TokenCorpus.open(corpus_dir, vocab_fingerprint(tokenizer.get_vocab()))
    data = _split_corpus(corpus, Path(train_text), config, tokenizer.sep_token_id)
    model_config = llama_config(tokenizer, config)
    n_blocks = len(data["train"]) // (config.context + 1)
    _check_fits(config, len(tokenizer), n_blocks, str(corpus_dir))
    flops_per_token = train_flops_per_token(model_config, config.context)
    steps = training_steps(config, n_blocks, flops_per_token)
    device = resolve_device(config.device, config.on_missing_gpu)
    torch.manual_seed(config.seed)
    model = LlamaForCausalLM(model_config).to(device)
    train_ids = corpus.chunks(stop=int(corpus.line_offsets[data["train_lines"]]))
    facts = data_facts(model, data["train"].counts(len(tokenizer), train_ids))
    _check_data(config, facts, str(corpus_dir))
    fingerprint = settings_fingerprint(config.weight_settings(), corpus.meta["fingerprint"])
    checkpoint_dir = checkpoint_folder(checkpoint_root, fingerprint)
    if restore_outputs(out_dir, checkpoint_dir, write=distributed.is_main()):
        return out_dir / MODEL_DIR
    log.info(
        "%s: %d parameters, %d training tokens (%d bytes, %d blocks), %d steps (%s budget), "
        "%.3g training FLOPs",
        out_dir,
        sum(p.numel() for p in model.parameters()),
        len(data["train"]),
        data["train_bytes"],
        n_blocks,
        steps,
        config.budget,
        flops_per_token * steps * config.batch_size * config.context,
    )
    optimization = build_optimizer(
        model,
        config.lr,
        config.weight_decay,
        steps=steps,
        warmup_steps=int(config.warmup_ratio * steps),
        device=device,
    )
    settings = LoopSettings.of_run(
        config,
        steps,
        out_dir=out_dir,
        run_fingerprint=fingerprint,
        eval_every=config.eval_every or max(1, n_blocks // config.batch_size),
        patience=config.patience,
        flops_per_token=flops_per_token,
        checkpoint_dir=checkpoint_dir,
    )
    task = ClmTask(StreamBatches(data["train"], config), data["validation"], config, device)
    result = train(model, optimization, task, settings, device=device, on_step=on_step)
    tokens = result.steps * config.batch_size * config.context
    summary = {
        "architecture": "llama",
        "config": to_dict(config),
        "corpus": str(corpus_dir),
        "corpus_fingerprint": corpus.meta["fingerprint"],
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": len(tokenizer),
        "train_lines": data["train_lines"],
        "train_bytes": data["train_bytes"],
        "train_stream_tokens": len(data["train"]),
        **facts,
        "blocks_per_epoch": n_blocks,
        "dropped_tail_tokens": len(data["train"]) - n_blocks * (config.context + 1),
        "planned_steps": steps,
        "train_tokens": tokens,
        "epochs_done": result.steps * config.batch_size / n_blocks,
        "flops_per_token": flops_per_token,
        "train_flops": flops_per_token * tokens,
        **result_summary(result),
        "best_validation_loss": -(result.best or {}).get("score", float("nan")),
        "device": describe(device),
        "devices": distributed.world_size(),
    }
    if not distributed.is_main():  # rank 0 writes the run's files
        return out_dir / MODEL_DIR
    return finish_run(out_dir, model.save_pretrained, summary, SUMMARY_FILE, checkpoint_dir)


def next_token_loss(
    model: LogitsModel, inputs: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """The training loss: mean cross-entropy of each block position's next token."""
    logits = model(input_ids=inputs).logits
    return torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1)
    )


class ClmTask(TrainingTask):
    """The clm task on the shared loop: stream blocks, next-token loss, validation loss.

    With ``models.clm.compile`` the loop compiles :meth:`loss` (the loss function, not the
    model, so the model keeps its own parameter names in checkpoints and
    ``save_pretrained``; its backward is compiled with it).
    """

    log_columns = ("loss", "validation_loss")
    compile_on_cuda = True  # base at 1024 x 32: 1.85x the eager tokens/s (docs/gpu.md)

    def __init__(
        self, batches: StreamBatches, validation: np.ndarray, config: ClmConfig, device
    ) -> None:
        self.batches = batches
        self.validation = validation
        self.config = config
        self.device = device

    def batch(self, step: int) -> tuple[tuple[torch.Tensor, torch.Tensor], int]:
        inputs, targets = self.batches(step)
        return (inputs, targets), targets.numel()

    def loss(self, model: torch.nn.Module, batch: Any) -> Any:
        loss = next_token_loss(model, *batch)
        return loss, {"loss": loss.detach().float()}

    def evaluate(self, model: torch.nn.Module, step: int) -> tuple[dict[str, Any], float]:
        loss = validation_loss(model, self.validation, self.config, self.device)
        return {"validation_loss": loss}, -loss
