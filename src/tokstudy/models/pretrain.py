"""Masked-LM pretraining: a step loop on the shared core (:mod:`tokstudy.training.core`).

Output folder of one run::

    checkpoint.pt     last checkpoint (removed when the run completes; the workflow keeps it
                      outside the run folder, with a copy of the log and, once the run is
                      done, its outputs: :func:`~tokstudy.training.run_state.keep_outputs`)
    train_log.csv     step, loss, lr, tokens_per_s, elapsed_s every ``log_every`` steps
    model/            the trained model (``save_pretrained`` for BERT)
    pretrain.json     settings and summary, written last: the run's completion marker

Rerunning after a kill resumes from ``checkpoint.pt`` (or, killed after its outputs were
written, takes them back without training); the batches and masking of each
step depend only on ``(seed, step)`` and the torch RNG (dropout) is restored, so the
resumed run ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from scipy import stats
from transformers import BertConfig, BertForMaskedLM

from tokstudy.errors import TokstudyError
from tokstudy.models.config import PRESETS, PretrainConfig, to_dict
from tokstudy.models.data import (
    BlockSampler,
    TokenCorpus,
    gather_blocks,
    with_cls_sep,
)
from tokstudy.models.masking import LABEL_POSITIONS, Masker, labelled, with_label_positions
from tokstudy.training import distributed
from tokstudy.training.checkpoint import checkpoint_folder, settings_fingerprint
from tokstudy.training.core import finish_run
from tokstudy.training.data_fit import data_facts, unit_counts
from tokstudy.training.device import describe, resolve_device
from tokstudy.training.flops import encoder_flops_per_token
from tokstudy.training.loop import LoopResult, LoopSettings, TrainingTask, result_summary, train
from tokstudy.training.optimizer import build_optimizer
from tokstudy.training.run_state import MODEL_DIR, restore_outputs

log = logging.getLogger(__name__)

SUMMARY_FILE = "pretrain.json"


class BatchSource(Protocol):
    """Model inputs (including ``labels``) for a training step."""

    def __call__(self, step: int) -> dict[str, torch.Tensor]: ...


LossFn = Callable[[torch.nn.Module, dict[str, torch.Tensor]], torch.Tensor]


def bert_mlm_loss(model: BertForMaskedLM, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``model(**batch).loss``, with the output layer run on the masked positions only.

    The vocabulary projection of every position is what dominates small models' cost;
    only the ~15 % masked positions have a loss, so the others are skipped. The positions
    come from the batch's ``label_positions`` where the host found them
    (:func:`~tokstudy.models.masking.with_label_positions`), from its labels otherwise.
    """
    hidden = model.bert(input_ids=batch["input_ids"]).last_hidden_state
    hidden, labels = labelled(hidden, batch["labels"], batch.get(LABEL_POSITIONS))
    return torch.nn.functional.cross_entropy(model.cls(hidden).float(), labels)


def bert_config(tokenizer: Any, config: PretrainConfig) -> BertConfig:
    """A BERT configuration of ``config.preset`` for ``tokenizer``'s vocabulary."""
    return BertConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=config.max_length,
        pad_token_id=tokenizer.pad_token_id,
        hidden_dropout_prob=config.dropout,
        attention_probs_dropout_prob=config.attention_dropout_prob,
        attn_implementation="sdpa",
        **PRESETS[config.preset],
    )


class BlockBatches:
    """Blocks of a corpus on disk drawn per ``(seed, step)``, and their masker."""

    def __init__(
        self,
        corpus: TokenCorpus,
        tokenizer: Any,
        config: PretrainConfig,
        *,
        whole_word_mask: bool = False,
    ) -> None:
        self.corpus = corpus
        self.block_len = config.max_length - 2
        self.sampler = BlockSampler(corpus.n_tokens, self.block_len, config.batch_size, config.seed)
        self.masker = Masker(
            tokenizer,
            mlm_probability=config.mlm_probability,
            mask_replace_prob=config.mask_replace_prob,
            random_replace_prob=config.random_replace_prob,
            whole_word_mask=whole_word_mask,
            seed=config.seed,
        )


class BertBatches(BlockBatches):
    """MLM batches of ``[CLS] block [SEP]`` drawn from a corpus on disk."""

    def __init__(self, corpus: TokenCorpus, tokenizer: Any, config: PretrainConfig) -> None:
        if config.whole_word_mask and "char_spans" not in corpus.arrays:
            raise TokstudyError(
                f"{corpus.directory}: whole_word_mask needs a corpus pre-tokenized with "
                "character spans (pretokenize(..., with_char_spans=True))"
            )
        super().__init__(corpus, tokenizer, config, whole_word_mask=config.whole_word_mask)
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
    return settings_fingerprint(config.weight_settings(), extra)


class MlmTask(TrainingTask):
    """Masked-LM pretraining on the shared loop: the batches and loss of each step."""

    def __init__(self, batches: BatchSource, loss_fn: LossFn) -> None:
        self.batches = batches
        self.loss_fn = loss_fn

    def batch(self, step: int) -> tuple[dict[str, torch.Tensor], int]:
        batch = self.batches(step)
        return batch, batch["labels"].numel()

    def loss(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> Any:
        loss = self.loss_fn(model, batch)
        return loss, {"loss": loss.detach().float()}

    def loss_terms(self, batch: dict[str, torch.Tensor]) -> int:
        return int((batch["labels"] != -100).sum())

    def on_host(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return with_label_positions(batch)


def train_mlm(
    model: torch.nn.Module,
    batches: BatchSource,
    config: PretrainConfig,
    out_dir: Path,
    *,
    device: torch.device,
    run_fingerprint: str,
    loss_fn: LossFn,
    on_step: Callable[[int], None] | None = None,
    flops_per_token: float = 0.0,
    checkpoint_dir: Path | None = None,
) -> LoopResult:
    """Train ``model`` (BERT or CharacterBERT) on the MLM task for ``config.steps`` steps on
    the shared loop (:func:`tokstudy.training.loop.train`), resuming from the checkpoint.

    ``loss_fn(model, batch)`` gives the batch's loss; ``on_step(step)`` is called after
    each completed step (progress hooks, tests); ``checkpoint_dir``: where the checkpoint
    lives (``out_dir`` unless given).
    """
    model.to(device)
    optimization = build_optimizer(
        model,
        config.lr,
        config.weight_decay,
        steps=config.steps,
        warmup_steps=config.warmup_steps,
        device=device,
    )
    settings = LoopSettings.of_run(
        config,
        config.steps,
        out_dir=out_dir,
        run_fingerprint=run_fingerprint,
        flops_per_token=flops_per_token,
        checkpoint_dir=checkpoint_dir,
    )
    task = MlmTask(batches, loss_fn)
    return train(model, optimization, task, settings, device=device, on_step=on_step)


def bert_flops_per_token(model_config: BertConfig, config: PretrainConfig) -> float:
    """Training FLOPs per token of BERT MLM: the encoder, and the output head (transform
    and vocabulary projection) on the masked share of the positions only
    (:func:`bert_mlm_loss`)."""
    d = model_config.hidden_size
    head = config.mlm_probability * (d * d + model_config.vocab_size * d)
    return encoder_flops_per_token(
        layers=model_config.num_hidden_layers,
        hidden=d,
        intermediate=model_config.intermediate_size,
        context=config.max_length,
        ffn_matrices=2,
        head_params=head,
    )


@distributed.per_config_devices("models.pretrain.devices")
def pretrain_bert(
    tokenizer: Any,
    corpus_dir: Path,
    out_dir: Path,
    config: PretrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
    checkpoint_root: Path | None = None,
) -> Path:
    """Pretrain a BERT masked-LM on a pre-tokenized corpus; the saved model folder.

    ``checkpoint_root``: the checkpoint lives in ``checkpoint_root/<settings fingerprint>``
    (in ``out_dir`` unless given). With ``devices: N > 1`` it runs in ``N`` processes
    (:mod:`tokstudy.training.distributed`)."""
    out_dir = Path(out_dir)
    corpus = TokenCorpus.open(corpus_dir)
    if corpus.meta["vocab_size"] != len(tokenizer):
        raise TokstudyError(
            f"{corpus_dir}: corpus vocabulary size {corpus.meta['vocab_size']} does not match "
            f"the tokenizer's {len(tokenizer)}"
        )
    device = resolve_device(config.device, config.on_missing_gpu)
    torch.manual_seed(config.seed)
    model_config = bert_config(tokenizer, config)
    model = BertForMaskedLM(model_config)
    batches = BertBatches(corpus, tokenizer, config)
    run_fingerprint = fingerprint(config, corpus.meta["fingerprint"])
    checkpoint_dir = checkpoint_folder(checkpoint_root, run_fingerprint)
    if restore_outputs(out_dir, checkpoint_dir, write=distributed.is_main()):
        return out_dir / MODEL_DIR
    result = train_mlm(
        model,
        batches,
        config,
        out_dir,
        device=device,
        run_fingerprint=run_fingerprint,
        loss_fn=bert_mlm_loss,
        on_step=on_step,
        flops_per_token=bert_flops_per_token(model_config, config),
        checkpoint_dir=checkpoint_dir,
    )
    counts = unit_counts(corpus.chunks(), len(tokenizer))
    summary = {
        "architecture": "bert",
        "config": to_dict(config),
        "corpus": str(corpus_dir),
        "corpus_fingerprint": corpus.meta["fingerprint"],
        "parameters": sum(p.numel() for p in model.parameters()),
        **data_facts(model, counts),
        **result_summary(result),
        "device": describe(device),
        **learned_or_not(result.final_loss, counts, config.undertrained_margin, out_dir),
        "devices": distributed.world_size(),
    }
    if not distributed.is_main():  # rank 0 writes the run's files
        return out_dir / MODEL_DIR
    return finish_run(out_dir, model.save_pretrained, summary, SUMMARY_FILE, checkpoint_dir)


def learned_or_not(
    final_loss: float, counts: np.ndarray, margin: float, where: Path
) -> dict[str, float]:
    """The final MLM loss against the unigram entropy (nats) of the training tokens, the
    loss of predicting each masked token by its frequency alone: ``unigram_entropy``,
    ``below_unigram`` (1 − loss / entropy) and ``undertrained`` (below the ``margin``;
    logged as a warning). ``counts``: how often each token id occurs in the training
    tokens."""
    entropy = float(stats.entropy(counts))
    below = 1 - final_loss / entropy
    if below < margin:
        log.warning(
            "%s: undertrained: final loss %.4f is %.1f %% below the unigram entropy %.4f of "
            "its training tokens (margin %.0f %%)",
            where,
            final_loss,
            100 * below,
            entropy,
            100 * margin,
        )
    return {
        "unigram_entropy": entropy,
        "below_unigram": below,
        "undertrained": float(below < margin),
    }
