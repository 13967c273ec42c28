"""The ``clm`` task: a Llama-style decoder trained from scratch per cell, scored in bits
per byte on held-out text, beside the unigram baseline of the same tokenizer.

Text as a token stream (training and scoring alike): each line's tokens followed by the
tokenizer's ``[SEP]``, which stands for the line's newline; the scored stream starts with
one ``[SEP]``, as every line of the training stream follows one, so the first token is
predicted from a context the model was trained on. Every token after it is scored (every
``[SEP]`` included), and the scored text is the lines each followed by a newline::

    bits per byte = Σ token NLL (nats) / ln 2 / UTF-8 bytes of the scored text

with a 95 % interval from a bootstrap over held-out lines (each line's tokens and its
``[SEP]``, against its bytes and newline). ``roundtrip`` is the share of held-out lines the
tokenizer decodes back exactly: below 1.0 its model predicted a simpler text than the
bytes it is divided by (a normalising tokenizer), and the cell is marked ``lossy``.

Text longer than the context is scored with windows whose right edge moves ``stride``
tokens at a time; each token is scored once, in the window where it first appears, with
at least ``context - stride`` tokens of left context (all of them near the start).

Training folder of one run::

    checkpoint.pt     last checkpoint (removed when the run completes)
    train_log.csv     step, loss, validation_loss, lr, tokens_per_s, flops_per_s, mfu,
                      elapsed_s (mfu: share of the device's dense peak; empty on the CPU)
    model/            the trained ``LlamaForCausalLM`` (``save_pretrained``)
    train.json        settings, budget and summary, written last: the completion marker

Reruns resume from ``checkpoint.pt``: the blocks of a step depend only on
``(seed, step)`` and the RNG states are restored, so a resumed run ends with the same
weights as an uninterrupted one.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from tokstudy.corpus_io import iter_nonblank_lines, read_nonblank_lines
from tokstudy.errors import TokstudyError
from tokstudy.models import noise
from tokstudy.models.config import CLM_PRESETS, ClmConfig, to_dict
from tokstudy.models.data import BlockSampler, TokenCorpus, gather_blocks, vocab_fingerprint
from tokstudy.models.family import load_transformers_tokenizer
from tokstudy.models.heldout import (
    bits_per_byte_interval,
    decoder_for,
    per_line_sums,
    roundtrip_share,
)
from tokstudy.models.pretrain import MODEL_DIR, build_optimizer
from tokstudy.models.tsv import write_tsv
from tokstudy.training import distributed
from tokstudy.training.checkpoint import checkpoint_folder, drop_checkpoint, settings_fingerprint
from tokstudy.training.core import save_atomically
from tokstudy.training.data_fit import data_facts
from tokstudy.training.device import describe, resolve_device
from tokstudy.training.flops import encoder_flops_per_token
from tokstudy.training.loop import LoopSettings, Task, result_summary, train

log = logging.getLogger(__name__)

SUMMARY_FILE = "train.json"
SCORES_FILE = "clm.tsv"
DETAILS_FILE = "clm.json"
LOG_COLUMNS = (
    "step",
    "loss",
    "validation_loss",
    "lr",
    "tokens_per_s",
    "flops_per_s",
    "mfu",
    "elapsed_s",
)
#: settings that do not change the trained weights (left out of the checkpoint fingerprint)
#: the config key of the number of processes, in error messages
NON_TRAINING_KEYS = frozenset(
    {
        "checkpoint_every",
        "log_every",
        "on_bad_checkpoint",
        "device",
        "on_missing_gpu",
        "devices",
        "heldout_max_lines",
        "eval_batch_size",
        "undertrained_margin",
        "stride",
        "min_tokens_per_parameter",
        "bootstrap_resamples",
    }
)

LogitsModel = Callable[..., Any]


# --- text as a token stream -------------------------------------------------------------


def check_vocabulary(tokenizer: Any, where: str) -> None:
    """A one-line error unless ``tokenizer`` has a decodable vocabulary: ids 0…V-1, each
    a token string, and the ``[CLS]`` / ``[SEP]`` tokens that mark text start and line ends."""
    vocab = tokenizer.get_vocab()
    size = len(tokenizer)
    if not vocab or set(vocab.values()) != set(range(size)):
        raise TokstudyError(
            f"{where}: the tokenizer has no decodable vocabulary (its {len(vocab)} vocabulary "
            f"ids are not 0..{size - 1})"
        )
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise TokstudyError(
            f"{where}: the tokenizer has no [CLS] / [SEP] token to mark text start and line ends"
        )


def line_stream(ids: np.ndarray, offsets: np.ndarray, eol_id: int) -> np.ndarray:
    """The tokens of each line (``ids[offsets[i]:offsets[i+1]]``), each line followed by
    ``eol_id``, as one int64 array."""
    return np.insert(np.asarray(ids, dtype=np.int64), np.asarray(offsets[1:]), eol_id)


def encode_lines(tokenizer: Any, lines: Sequence[str]) -> list[list[int]]:
    """Each line's token ids (no special tokens)."""
    return tokenizer(list(lines), add_special_tokens=False)["input_ids"]


def scored_stream(encoded: Sequence[Sequence[int]], sep_id: int) -> np.ndarray:
    """``[SEP]``, then each line's tokens followed by ``[SEP]`` (the scored stream)."""
    offsets = np.cumsum([0, *map(len, encoded)])
    flat = np.fromiter((i for ids in encoded for i in ids), dtype=np.int64, count=offsets[-1])
    return np.concatenate([[sep_id], line_stream(flat, offsets, sep_id)]).astype(np.int64)


def line_bytes(lines: Sequence[str]) -> np.ndarray:
    """UTF-8 bytes of each line with its newline (the scored text)."""
    return np.array([len(line.encode("utf-8")) + 1 for line in lines], dtype=np.int64)


def text_bytes(lines: Sequence[str]) -> int:
    """UTF-8 bytes of the lines, each followed by a newline (the scored text)."""
    return int(line_bytes(lines).sum())


# --- scoring ----------------------------------------------------------------------------


def window_plan(n_tokens: int, context: int, stride: int) -> list[tuple[int, int, int]]:
    """``(begin, end, first scored)`` of each scoring window over positions ``0…n-1``.

    Window ``k`` ends at ``min(context + k·stride, n)``, starts ``context`` positions
    before (at least 0) and scores the positions from the previous window's end (1 for
    the first: position 0 is the ``[SEP]`` the text starts from) to its own end.
    """
    if not 0 < stride < context:
        raise ValueError(f"stride {stride} must lie in 1..{context - 1}")
    plan, scored_to, end = [], 1, min(context, n_tokens)
    while scored_to < n_tokens:
        plan.append((max(0, end - context), end, scored_to))
        scored_to, end = end, min(end + stride, n_tokens)
    return plan


@torch.no_grad()
def token_nll(
    model: LogitsModel,
    stream: np.ndarray,
    context: int,
    stride: int,
    *,
    batch_size: int = 8,
    device: torch.device | None = None,
) -> np.ndarray:
    """NLL in nats of every position ``1…n-1`` of ``stream`` given what precedes it
    (sliding windows of :func:`window_plan`); ``model(input_ids=…)`` returns ``.logits``."""
    device = device or torch.device("cpu")
    ids = torch.as_tensor(stream, dtype=torch.long)
    nll = np.full(len(stream) - 1, np.nan)
    plan = window_plan(len(stream), context, stride)
    for first in range(0, len(plan), batch_size):
        chunk = plan[first : first + batch_size]
        width = max(end - begin for begin, end, _ in chunk)
        # right padding: a causal model's earlier positions never see it
        batch = torch.zeros(len(chunk), width, dtype=torch.long)
        for row, (begin, end, _) in enumerate(chunk):
            batch[row, : end - begin] = ids[begin:end]
        logits = model(input_ids=batch.to(device)).logits.float()
        log_probs = torch.log_softmax(logits, dim=-1).cpu()
        for row, (begin, end, scored) in enumerate(chunk):
            targets = ids[scored:end]
            predicted_at = torch.arange(scored - 1, end - 1) - begin
            picked = log_probs[row, predicted_at].gather(1, targets[:, None])[:, 0]
            nll[scored - 1 : end - 1] = -picked.numpy()
    return nll


def bits_per_byte(nll_nats: float, n_bytes: int) -> float:
    """Σ NLL / ln 2 / bytes."""
    return nll_nats / math.log(2) / n_bytes


def unigram_log2_probs(counts: np.ndarray) -> np.ndarray:
    """log2 of add-one smoothed token probabilities ``(count + 1) / (N + V)``."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.log2(counts + 1) - np.log2(counts.sum() + len(counts))


def unigram_bits(train_stream: np.ndarray, scored: np.ndarray, vocab_size: int) -> float:
    """Bits of the ``scored`` tokens under the add-one unigram of ``train_stream``."""
    log2p = unigram_log2_probs(np.bincount(train_stream, minlength=vocab_size))
    return float(-log2p[scored].sum())


# --- the model and its budget ------------------------------------------------------------


def llama_config(tokenizer: Any, config: ClmConfig) -> LlamaConfig:
    """The decoder of ``config.preset`` for ``tokenizer``'s vocabulary (tied embeddings)."""
    sizes = {k: v for k, v in CLM_PRESETS[config.preset].items() if not k.startswith("max_")}
    return LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=config.context,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
        attention_dropout=config.dropout,
        attn_implementation="sdpa",
        **sizes,
    )


def train_flops_per_token(model_config: LlamaConfig, context: int) -> float:
    """Training FLOPs per token: 6 · matmul parameters (layers and the output head) plus
    12 · layers · context · hidden for the attention scores and values (counted in full)."""
    d = model_config.hidden_size
    return encoder_flops_per_token(
        layers=model_config.num_hidden_layers,
        hidden=d,
        intermediate=model_config.intermediate_size,
        context=context,
        ffn_matrices=3,
        head_params=model_config.vocab_size * d,
    )


def training_steps(config: ClmConfig, n_blocks: int, flops_per_token: float) -> int:
    """Optimizer steps of the budget: ``epochs`` over the blocks (``bytes``), or as many
    steps as ``train_flops`` pays for (``flops``); at least 1."""
    if config.budget == "flops":
        return max(
            1, int(config.train_flops // (flops_per_token * config.batch_size * config.context))
        )
    return max(1, math.ceil(config.epochs * n_blocks / config.batch_size))


class StreamBatches:
    """Blocks of ``context + 1`` tokens drawn per ``(seed, step)``: inputs and next tokens."""

    def __init__(self, stream: np.ndarray, config: ClmConfig) -> None:
        self.stream = stream
        self.block_len = config.context + 1
        self.sampler = BlockSampler(len(stream), self.block_len, config.batch_size, config.seed)

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        blocks = gather_blocks(self.stream, self.sampler.starts(step), self.block_len)
        blocks = torch.from_numpy(blocks)
        return blocks[:, :-1], blocks[:, 1:]


# --- training -------------------------------------------------------------------------


def _split_corpus(corpus: TokenCorpus, train_text: Path, config: ClmConfig, eol: int) -> dict:
    """Training and validation streams (the last ``validation_lines`` lines) and bytes."""
    lines = corpus.n_lines
    if config.validation_lines >= lines:
        raise TokstudyError(
            f"{corpus.directory}: {lines} lines do not leave training text beside "
            f"models.clm.validation_lines ({config.validation_lines})"
        )
    sizes = [len(line.encode("utf-8")) + 1 for line in iter_nonblank_lines(train_text)]
    if len(sizes) != lines:
        raise TokstudyError(
            f"{train_text}: {len(sizes)} lines, but its pre-tokenized corpus has {lines}"
        )
    cut = lines - config.validation_lines
    ids, offsets = corpus.ids, corpus.line_offsets
    return {
        "train": line_stream(ids[: offsets[cut]], offsets[: cut + 1], eol),
        "validation": line_stream(ids[offsets[cut] :], offsets[cut:] - offsets[cut], eol),
        "train_bytes": sum(sizes[:cut]),
        "train_lines": cut,
    }


def _check_fits(config: ClmConfig, vocab_size: int, n_blocks: int, where: str) -> None:
    """One-line errors for a vocabulary the preset cannot hold or a corpus below a batch."""
    max_vocab = CLM_PRESETS[config.preset]["max_vocab"]
    if vocab_size > max_vocab:
        raise TokstudyError(
            f"{where}: vocabulary of {vocab_size} does not fit models.clm.preset "
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
    facts = data_facts(model, data["train"])
    _check_data(config, facts, str(corpus_dir))
    settings = {k: v for k, v in to_dict(config).items() if k not in NON_TRAINING_KEYS}
    fingerprint = settings_fingerprint(settings, corpus.meta["fingerprint"])
    checkpoint_dir = checkpoint_folder(checkpoint_root, fingerprint)
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
    result = _train(
        model,
        StreamBatches(data["train"], config),
        data["validation"],
        config,
        steps,
        out_dir,
        device,
        fingerprint,
        on_step,
        flops_per_token=flops_per_token,
        checkpoint_dir=checkpoint_dir,
    )
    tokens = result["steps"] * config.batch_size * config.context
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
        "epochs_done": result["steps"] * config.batch_size / n_blocks,
        "flops_per_token": flops_per_token,
        "train_flops": flops_per_token * tokens,
        **result,
        "device": describe(device),
        "devices": distributed.world_size(),
    }
    if not distributed.is_main():  # rank 0 writes the run's files
        return out_dir / MODEL_DIR
    model_dir = save_atomically(model.save_pretrained, out_dir / MODEL_DIR)
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    drop_checkpoint(out_dir, checkpoint_dir)
    return model_dir


def next_token_loss(
    model: LogitsModel, inputs: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """The training loss: mean cross-entropy of each block position's next token."""
    logits = model(input_ids=inputs).logits
    return torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1)
    )


class ClmTask(Task):
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


def _train(
    model: torch.nn.Module,
    batches: StreamBatches,
    validation: np.ndarray,
    config: ClmConfig,
    steps: int,
    out_dir: Path,
    device: torch.device,
    fingerprint: str,
    on_step: Callable[[int], None] | None,
    *,
    flops_per_token: float = 0.0,
    checkpoint_dir: Path | None = None,
) -> dict[str, Any]:
    """The clm task on the shared loop (:func:`tokstudy.training.loop.train`)."""
    optimizer, scheduler = build_optimizer(
        model, config, steps, int(config.warmup_ratio * steps), fused=device.type == "cuda"
    )
    settings = LoopSettings(
        steps=steps,
        log_every=config.log_every,
        checkpoint_every=config.checkpoint_every,
        grad_clip=config.grad_clip,
        bf16=config.bf16,
        compile=config.compile,
        compile_key="models.clm.compile",
        accumulate=config.accumulate,
        eval_every=config.eval_every or max(1, batches.sampler.n_blocks // config.batch_size),
        patience=config.patience,
        flops_per_token=flops_per_token,
        on_bad_checkpoint=config.on_bad_checkpoint,
        restart_hint="delete it to restart, or set models.clm.on_bad_checkpoint: restart",
        checkpoint_dir=checkpoint_dir,
    )
    task = ClmTask(batches, validation, config, device)
    result = train(
        model,
        optimizer,
        scheduler,
        task,
        settings,
        out_dir,
        device=device,
        run_fingerprint=fingerprint,
        on_step=on_step,
    )
    best = result.best or {}
    return {
        **result_summary(result),
        "best_validation_loss": -best.get("score", float("nan")),
    }


#: training facts of a run shown beside its scores (``clm.json``, the ``clm`` table), in order
TRAINING_FACTS = (
    "preset",
    "budget",
    "parameters",
    "non_embedding_parameters",
    "epochs_done",
    "steps",
    "train_bytes",
    "train_tokens",
    "training_tokens",
    "unique_training_tokens",
    "tokens_per_parameter",
    "train_flops",
    "validation_lines",
    "best_validation_loss",
    "tokens_per_s",
    "mfu",
)
#: facts read from the run's settings rather than its summary
_FROM_CONFIG = frozenset({"preset", "budget", "validation_lines"})
#: throughput and MFU (empty on the CPU): runs trained before the shared loop lack them
_OPTIONAL = frozenset({"tokens_per_s", "mfu"})


def _training_facts(summary_file: Path) -> dict[str, Any]:
    """The budget of a training run (its ``train.json``), for the tables."""
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    config = summary["config"]
    return {
        key: config[key]
        if key in _FROM_CONFIG
        else summary.get(key)
        if key in _OPTIONAL
        else summary[key]
        for key in TRAINING_FACTS
    }


# --- scoring a trained model -------------------------------------------------------------


def score_clm(
    model_dir: Path,
    tokenizer_dir: Path,
    corpus_dir: Path,
    heldout: Path,
    out_tsv: Path,
    config: ClmConfig,
    *,
    noise_levels: Sequence[int] = (),
    noise_seed: int = 0,
    noise_word_fraction: float = 0.2,
) -> pd.DataFrame:
    """Bits per byte of the held-out text, clean (level 0) and at each noise level, beside
    the unigram bits per byte of the same tokens and the ``undertrained`` flag.

    Writes ``level, metric, value, relative_change`` rows to ``out_tsv`` and the counts
    behind them to ``clm.json`` beside it.
    """
    tokenizer = load_transformers_tokenizer(tokenizer_dir)
    check_vocabulary(tokenizer, str(tokenizer_dir))
    corpus = TokenCorpus.open(corpus_dir, vocab_fingerprint(tokenizer.get_vocab()))
    train_stream = line_stream(corpus.ids, corpus.line_offsets, tokenizer.sep_token_id)
    lines = read_nonblank_lines(heldout, config.heldout_max_lines or None)
    if not lines:
        raise TokstudyError(f"{heldout}: no text lines to score")
    device = resolve_device(config.device, config.on_missing_gpu)
    model = LlamaForCausalLM.from_pretrained(model_dir).to(device).eval()
    noised, _ = noise.noise_lines(
        lines, noise_levels, seed=noise_seed, word_fraction=noise_word_fraction
    )
    decode = decoder_for(tokenizer_dir, tokenizer)
    results, details = {}, {}
    for level, text in {0: lines, **noised}.items():
        encoded = encode_lines(tokenizer, text)
        stream = scored_stream(encoded, tokenizer.sep_token_id)
        nll = token_nll(
            model,
            stream,
            config.context,
            config.window_stride,
            batch_size=config.eval_batch_size,
            device=device,
        )
        per_line_nats = per_line_sums(nll, [len(ids) + 1 for ids in encoded])
        per_line_bytes = line_bytes(text)
        n_bytes = int(per_line_bytes.sum())
        model_bpb = bits_per_byte(float(nll.sum()), n_bytes)
        low, high = bits_per_byte_interval(
            per_line_nats, per_line_bytes, resamples=config.bootstrap_resamples, seed=config.seed
        )
        unigram_bpb = unigram_bits(train_stream, stream[1:], len(tokenizer)) / n_bytes
        below = 1 - model_bpb / unigram_bpb
        results[level] = {
            "bits_per_byte": model_bpb,
            "bits_per_byte_low": low,
            "bits_per_byte_high": high,
            "unigram_bits_per_byte": unigram_bpb,
            "below_unigram": below,
            "undertrained": float(below < config.undertrained_margin),
            "roundtrip": roundtrip_share(encoded, text, decode),
        }
        unk = (
            int(np.sum(stream == tokenizer.unk_token_id))
            if tokenizer.unk_token_id is not None
            else 0
        )
        details[level] = {
            "lines": len(text),
            "bytes": n_bytes,
            "tokens_scored": len(stream) - 1,
            "unk_tokens": unk,
            **results[level],
        }
        log.info(
            "level %d%%: %.4f bits per byte (95 %% interval %.4f-%.4f; unigram %.4f, %.1f %% "
            "below), %d tokens, %d bytes, %d [UNK], %.1f %% of lines decode back exactly",
            level,
            model_bpb,
            low,
            high,
            unigram_bpb,
            100 * below,
            len(stream) - 1,
            n_bytes,
            unk,
            100 * results[level]["roundtrip"],
        )
        if unk:
            log.warning("%s: %d held-out tokens are [UNK] (level %d%%)", heldout, unk, level)
        if level == 0 and results[level]["roundtrip"] < 1:
            log.warning(
                "%s: lossy: %.1f %% of the held-out lines do not decode back to themselves; "
                "its model predicts a simpler text than the bytes its bits are divided by "
                "(normalise the corpora: corpus_defaults.normalize)",
                tokenizer_dir,
                100 * (1 - results[level]["roundtrip"]),
            )
        if level == 0 and results[level]["undertrained"]:
            log.warning(
                "%s: undertrained: %.1f %% below the unigram baseline (margin %.0f %%)",
                model_dir,
                100 * below,
                100 * config.undertrained_margin,
            )
    table = noise.relative_changes(results)
    write_tsv(table, out_tsv)
    summary = {
        "convention": "[SEP] begins the text and ends each line; every token after the "
        "first [SEP] scored; bytes = UTF-8 bytes of the lines plus one newline each; "
        "interval: 95 % percentile bootstrap over lines; roundtrip: share of lines the "
        "tokenizer decodes back exactly",
        "context": config.context,
        "stride": config.window_stride,
        "unigram": "add-one smoothed token frequencies of the training text over the "
        "whole vocabulary",
        "train_tokens_for_unigram": len(train_stream),
        "training": _training_facts(Path(model_dir).parent / SUMMARY_FILE),
        "levels": details,
    }
    Path(out_tsv).with_name(DETAILS_FILE).write_text(
        json.dumps(summary, indent=1), encoding="utf-8"
    )
    return table
