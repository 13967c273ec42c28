"""Training one translation model (one seed) with early stopping on dev chrF.

Output folder of one run::

    model/          the model with the best dev chrF (``save_pretrained``)
    checkpoint.pt   the training state at the last evaluation (removed when the run ends)

With a checkpoint folder of its own (the workflow's), the checkpoint, a copy of the log and
the best model so far live there, outside the job's outputs, and the best model is copied
into the run folder at the end (:func:`~tokstudy.training.run_state.keep_outputs` then
keeps the outputs there until the workflow has recorded the job).
    train_log.csv   one row per evaluation (the loop's columns and ``NmtTask.log_columns``)
    train.json      settings and summary, written last: the run's completion marker

The loop runs on the shared core (:mod:`tokstudy.training.core`): a rerun after a kill
resumes from the checkpoint (batches depend only on ``(seed, epoch)`` and the torch RNG
is restored, so it ends with the same weights and log as an uninterrupted run).

A step is one token-budget batch; epochs reshuffle with ``(seed, epoch)``. Every
``eval_every`` steps (and at ``max_steps``) the dev sources are translated, detokenized
and scored; training stops after ``patience`` evaluations without a better dev chrF.
``tokens_per_s`` counts source and target tokens (padding excluded) over training time
only, evaluation excluded; ``flops_per_s`` each batch's training FLOPs at its sentences'
lengths (:func:`nmt_train_flops`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tokstudy.errors import TokstudyError
from tokstudy.nmt.batching import (
    IGNORE_INDEX,
    EncodedPair,
    collate,
    encode_pairs,
    shared_special_ids,
    window_batches,
)
from tokstudy.nmt.config import DecodeConfig, TrainConfig
from tokstudy.nmt.decode import encode_sources, translate
from tokstudy.nmt.model import build_model, label_smoothed_loss
from tokstudy.nmt.scoring import corpus_scores, detokenize
from tokstudy.tokenizers.base import Tokenizer
from tokstudy.training import distributed
from tokstudy.training.checkpoint import checkpoint_folder, settings_fingerprint
from tokstudy.training.config import to_dict
from tokstudy.training.core import recover_saved, save_atomically
from tokstudy.training.data_fit import data_facts, unit_counts
from tokstudy.training.device import describe, resolve_device
from tokstudy.training.flops import encoder_decoder_flops
from tokstudy.training.loop import LoopSettings, TrainingTask, train
from tokstudy.training.optimizer import Optimization, build_optimizer
from tokstudy.training.run_state import MODEL_DIR, keep_outputs, link_or_copy, restore_outputs

log = logging.getLogger(__name__)

SUMMARY_FILE = "train.json"
#: Adam's epsilon of the NMT runs (Marian's Transformer recipe: betas 0.9, 0.98; 1e-9)
ADAM_EPSILON = 1e-9


def epoch_batches(
    examples: Sequence[EncodedPair], max_tokens: int, multiple: int, seed: int
) -> Iterator[tuple[int, np.ndarray]]:
    """``(epoch, batch)`` for ever, each epoch's batches (:func:`window_batches`) seeded by
    ``(seed, epoch)``."""
    for epoch in itertools.count():
        for batch in window_batches(examples, max_tokens, (seed, epoch), multiple):
            yield epoch, batch


class NmtTask(TrainingTask):
    """Translation on the shared loop: token-budget batches, label-smoothed loss, dev chrF.

    The log sums the loss and NLL of the window (per target token in the row); an
    evaluation translates the dev sources and scores chrF (early stopping's score) and
    BLEU; the best model so far is saved in ``out_dir/model``. With ``cuda_graphs`` the
    batches take fixed shapes (:func:`~tokstudy.nmt.batching.collate`'s ``budget``).
    """

    log_columns = ("epoch", "loss", "nll", "dev_chrf", "dev_bleu")
    mean_values = ()  # the log sums the loss of every target token
    variable_shapes = True

    def __init__(self, examples, special, config, model_config, evaluate, save) -> None:
        self.examples = examples
        self.model_config = model_config
        self.special = special
        self.label_smoothing = config.label_smoothing
        self.multiple = config.pad_to_multiple
        # CUDA graphs: batches of fixed shapes, replayed by a loss compiled on CUDA
        self.fixed_shapes = self.compile_on_cuda = config.cuda_graphs
        self.max_tokens = config.max_tokens
        self.all_batches = epoch_batches(examples, config.max_tokens, self.multiple, config.seed)
        self.batches = self.all_batches
        self.epochs: dict[int, int] = {}
        self.epoch = 0
        self.scores: dict = {}
        self._evaluate = evaluate
        self._save = save

    def start(self, step: int) -> None:
        self.batches = itertools.islice(self.all_batches, step, None)

    def batch(self, step: int) -> tuple[dict[str, torch.Tensor], int]:
        epoch, positions = next(self.batches)
        self.epochs[step] = epoch
        examples = [self.examples[i] for i in positions]
        budget = self.max_tokens if self.fixed_shapes else None
        batch = collate(examples, self.special, self.multiple, budget)
        # source tokens and the labels of the target tokens (padding and filler rows excluded)
        tokens = sum(len(example.source) + len(example.target) + 1 for example in examples)
        return batch, tokens

    def flops(self, batch: dict[str, torch.Tensor], tokens: int, flops_per_token: float) -> float:
        """The batch's training FLOPs at its sentences' lengths (:func:`nmt_train_flops`);
        none for filler rows (no target)."""
        targets = (batch["labels"] != IGNORE_INDEX).sum(dim=1)
        sources = batch["attention_mask"].sum(dim=1) * (targets > 0)
        return nmt_train_flops(self.model_config, sources, targets)

    def on_host(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The source mask as the attention layers take it, made here: ``transformers``
        would make it on the device, reading it back (``mask.all()``) to decide whether to
        skip it, a host-device synchronisation every step. Without padding there is none
        (the model then skips it too), else ``(rows, 1, 1, source length)``, True where
        attended (encoder self-attention and cross-attention broadcast it); always made for
        batches of fixed shapes, whose graphs take the same inputs every step."""
        mask = batch["attention_mask"]
        rest = {key: value for key, value in batch.items() if key != "attention_mask"}
        if bool(mask.all()) and not self.fixed_shapes:
            return rest
        return rest | {"attention_mask": mask[:, None, None, :] > 0}

    def loss(self, model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> Any:
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch.get("attention_mask"),
            decoder_input_ids=batch["decoder_input_ids"],
            use_cache=False,  # training reads no decoder cache: none is built
        ).logits
        loss, nll, target_tokens = label_smoothed_loss(
            logits, batch["labels"], self.label_smoothing
        )
        values = {"loss": loss.detach().double(), "nll": nll.detach().double()}
        return loss / target_tokens, values | {"target_tokens": target_tokens}

    def loss_terms(self, batch: dict[str, torch.Tensor]) -> int:
        return int((batch["labels"] != IGNORE_INDEX).sum())

    def log_values(self, sums, steps: int, done: int) -> dict[str, Any]:
        self.epoch = self.epochs.pop(done - 1)
        for step in [s for s in self.epochs if s < done]:
            del self.epochs[step]
        per_token = max(sums["target_tokens"], 1)
        return {
            "epoch": self.epoch,
            "loss": sums["loss"] / per_token,
            "nll": sums["nll"] / per_token,
        }

    def evaluate(self, model: torch.nn.Module, step: int) -> tuple[dict[str, Any], float]:
        self.scores = self._evaluate(model)
        values = {"dev_chrf": self.scores["chrf"], "dev_bleu": self.scores["bleu"]}
        return values, values["dev_chrf"]

    def improved(self, model: torch.nn.Module, step: int) -> None:
        self._save(model)


def nmt_train_flops(
    model_config: Any, source_lengths: torch.Tensor, target_lengths: torch.Tensor
) -> float:
    """Training FLOPs of sentence pairs of these lengths (padding excluded) through the
    Marian model of ``model_config`` (:func:`~tokstudy.training.flops.encoder_decoder_flops`)."""
    return encoder_decoder_flops(
        hidden=model_config.d_model,
        encoder_layers=model_config.encoder_layers,
        decoder_layers=model_config.decoder_layers,
        encoder_intermediate=model_config.encoder_ffn_dim,
        decoder_intermediate=model_config.decoder_ffn_dim,
        target_vocab=model_config.decoder_vocab_size or model_config.vocab_size,
        source_lengths=source_lengths,
        target_lengths=target_lengths,
    )


def run_fingerprint(
    config: TrainConfig,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    train_pairs: Iterable[tuple[str, str]],
    dev_pairs: Sequence[tuple[str, str]],
) -> str:
    """Hash of the settings, vocabularies and data that fix a run's weights."""
    data = hashlib.sha256()
    for pair in itertools.chain(train_pairs, [("", "")], dev_pairs):
        data.update("\t".join(pair).encode() + b"\n")
    vocabularies = [list(tokenizer.vocab) for tokenizer in (source_tokenizer, target_tokenizer)]
    return settings_fingerprint(
        config.weight_settings(), data.hexdigest() + json.dumps(vocabularies, ensure_ascii=False)
    )


def nmt_optimization(
    model: torch.nn.Module, config: TrainConfig, device: torch.device
) -> Optimization:
    """The shared optimizer (:func:`~tokstudy.training.optimizer.build_optimizer`) with the
    NMT betas and epsilon, and the inverse-square-root schedule after a linear warm-up to
    ``config.lr``."""
    return build_optimizer(
        model,
        config.lr,
        config.weight_decay,
        steps=config.max_steps,
        warmup_steps=config.warmup_steps,
        schedule="inverse_sqrt",
        betas=(config.adam_betas[0], config.adam_betas[1]),
        eps=ADAM_EPSILON,
        device=device,
    )


@distributed.per_config_devices("nmt.train.devices")
def train_translation_model(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    train_pairs: Iterable[tuple[str, str]],
    dev_pairs: Sequence[tuple[str, str]],
    out_dir: Path,
    config: TrainConfig,
    *,
    on_step: Callable[[int], None] | None = None,
    checkpoint_root: Path | None = None,
) -> dict:
    """Train one model; the best one by dev chrF is saved in ``out_dir/model``.

    Passing the same tokenizer object for both sides makes a joint vocabulary (one
    embedding matrix for encoder, decoder and output). A rerun after a kill resumes from
    the checkpoint of the last evaluation. ``on_step(step)`` is called after each
    completed step (progress hooks, tests); ``checkpoint_root``: the checkpoint lives in
    ``checkpoint_root/<settings fingerprint>`` (in ``out_dir`` unless given). Returns the
    summary it writes. With ``devices: N > 1`` it runs in ``N`` processes
    (:mod:`tokstudy.training.distributed`).

    ``train_pairs`` is read twice (its fingerprint, then its encoding), so it may be a
    list or a :class:`~tokstudy.nmt.data.SplitPairs` streamed from the split's files; the
    encoded pairs live in a temporary folder (``TMPDIR``; ~8 bytes a token) for the run.
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
    optimization = nmt_optimization(model, config, device)
    fingerprint = run_fingerprint(
        config, source_tokenizer, target_tokenizer, train_pairs, dev_pairs
    )
    checkpoint_dir = checkpoint_folder(checkpoint_root, fingerprint)
    if restore_outputs(out_dir, checkpoint_dir, write=distributed.is_main()):
        main = distributed.is_main()
        return json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8")) if main else {}
    # the best model so far lives beside the checkpoint (outside the job's outputs, which
    # Snakemake deletes after a failed job) until the run ends
    best_dir = (checkpoint_dir or out_dir) / MODEL_DIR
    recover_saved(best_dir)
    dev_decoding = DecodeConfig(
        beam_size=config.dev_beam_size,
        device=config.device,
        on_missing_gpu=config.on_missing_gpu,
        bf16=config.bf16,
    )
    parameters = sum(p.numel() for p in model.parameters())
    # the data for the model's size: the target tokens, which the loss predicts
    facts = data_facts(model, unit_counts(examples.target_ids()))
    log.info(
        "training %s NMT (%d parameters) on %s: %d training pairs, %d dev pairs",
        config.preset,
        parameters,
        describe(device),
        len(examples),
        len(dev_pairs),
    )

    def evaluate(model: torch.nn.Module) -> dict:
        hypotheses = translate(model, dev_sources, special, dev_decoding, device)
        return corpus_scores(detokenize(target_tokenizer, hypotheses), dev_references)

    task = NmtTask(
        examples,
        special,
        config,
        model.config,
        evaluate,
        lambda model: save_atomically(model.save_pretrained, best_dir),
    )
    settings = LoopSettings.of_run(
        config,
        config.max_steps,
        out_dir=out_dir,
        run_fingerprint=fingerprint,
        eval_every=config.eval_every,
        patience=config.patience,
        checkpoint_dir=checkpoint_dir,
    )
    result = train(model, optimization, task, settings, device=device, on_step=on_step)
    if not distributed.is_main():  # rank 0 evaluated and writes; launch returns its summary
        return {}
    best, step, epoch, scores = result.best, result.steps, task.epoch, task.scores
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
        "seconds": result.elapsed_s,
        "tokens_per_s": result.tokens_per_s,
        "flops_per_s": result.flops_per_s,
        "mfu": result.mfu,
        "compiled": result.extra["compiled"],
        "cuda_graphs": result.extra["cuda_graphs"],
        "devices": distributed.world_size(),
    }
    if best_dir != out_dir / MODEL_DIR:
        if not best_dir.is_dir():
            raise TokstudyError(
                f"{best_dir}: the best model (step {best['step']}) is missing; delete "
                f"{checkpoint_dir} to train this run afresh"
            )
        save_atomically(
            lambda folder: shutil.copytree(best_dir, folder, copy_function=link_or_copy),
            out_dir / MODEL_DIR,
        )
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    keep_outputs(out_dir, checkpoint_dir)
    log.info("best dev chrF %.2f at step %d", best["dev_chrf"], best["step"])
    return summary
