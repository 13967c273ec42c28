"""The training core shared by every trained model: steps, log, checkpoints, stopping.

A :class:`TrainingRun` owns one run folder::

    checkpoint.pt     last checkpoint (removed by :meth:`TrainingRun.finish`)
    train_log.csv     the rows the loop logs (its own columns)

With a checkpoint folder of its own (the workflow's, outside the job's outputs) the
checkpoint lives there, beside a second copy of the log. It resumes from the checkpoint
(model, optimizer, scheduler, RNG states, step and the loop's own state), keeps the log
rows up to the resumed step (from the copy beside the checkpoint), runs optimizer updates
(bf16 autocast on CUDA, gradient clipping, scheduler step) and writes checkpoints. What a
step trains on and when it logs, evaluates or stops is the loop's business (see
:mod:`tokstudy.models.pretrain` and :mod:`tokstudy.nmt.train`).
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from tokstudy.errors import TokstudyError
from tokstudy.files.write_errors import naming_write_failures
from tokstudy.training.checkpoint import (
    REQUIRED_KEYS,
    load_checkpoint,
    restore_rng_states,
    rng_states,
    save_checkpoint,
)
from tokstudy.training.device import autocast
from tokstudy.training.run_state import CHECKPOINT_FILE, MODEL_DIR, keep_outputs

log = logging.getLogger(__name__)

LOG_FILE = "train_log.csv"


class TrainLog:
    """A CSV file of training rows with fixed ``columns``, each row written and flushed as
    soon as the loop logs it (a progress reader sees it at once).

    ``kept``: a second copy beside the checkpoint, outside the job's declared outputs
    (which Snakemake deletes after a failed job): a resumed run takes the rows up to its
    checkpoint from there, so no row before the checkpoint is lost.
    """

    def __init__(self, path: Path, columns: Sequence[str], kept: Path | None = None) -> None:
        self.path = Path(path)
        self.columns = tuple(columns)
        self.kept = Path(kept) if kept is not None and Path(kept) != self.path else None
        self.files = [self.path] if self.kept is None else [self.path, self.kept]

    def start(self, step: int) -> None:
        """A fresh log (``step`` 0), or the rows up to ``step`` (a resumed run's), from the
        kept copy when there is one."""
        source = self.kept if self.kept is not None and self.kept.exists() else self.path
        rows = []
        if step and source.exists():
            with source.open(encoding="utf-8", newline="") as handle:
                rows = [row for row in csv.DictReader(handle) if int(row["step"]) <= step]
        for path in self.files:
            staged = path.with_name(path.name + ".tmp")
            with naming_write_failures(path, "the training log"):
                with staged.open("w", encoding="utf-8", newline="") as handle:
                    writer = csv.DictWriter(handle, fieldnames=self.columns)
                    writer.writeheader()
                    writer.writerows(rows)
                os.replace(staged, path)

    def append(self, row: Mapping[str, Any]) -> None:
        """Add one row (a value for every column) to each copy, flushed."""
        for path in self.files:
            with (
                naming_write_failures(path, "the training log"),
                path.open("a", encoding="utf-8", newline="") as handle,
            ):
                csv.DictWriter(handle, fieldnames=self.columns).writerow(row)
                handle.flush()


class Throughput:
    """Tokens and training FLOPs per second of wall-clock time since :meth:`restart`."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """Start a new window (after logging, evaluating or checkpointing)."""
        self.tokens, self.flops, self.started = 0, 0.0, time.perf_counter()

    def add(self, tokens: int, flops: float = 0.0) -> None:
        """Count the tokens and training FLOPs of one step."""
        self.tokens += tokens
        self.flops += flops

    def per_second(self) -> tuple[float, float]:
        """Tokens and FLOPs per second of the window so far."""
        seconds = max(time.perf_counter() - self.started, 1e-9)
        return self.tokens / seconds, self.flops / seconds


class EarlyStopping:
    """Stop after ``patience`` evaluations without a higher ``key`` value than the best."""

    def __init__(
        self,
        patience: int,
        key: str,
        *,
        best: Mapping[str, Any] | None = None,
        without_gain: int = 0,
    ) -> None:
        self.patience = patience
        self.key = key
        self.best = dict(best) if best is not None else None
        self.without_gain = without_gain

    def update(self, row: Mapping[str, Any]) -> bool:
        """Count one evaluation; whether ``row`` is the new best."""
        if self.best is None or row[self.key] > self.best[self.key]:
            self.best, self.without_gain = dict(row), 0
            return True
        self.without_gain += 1
        return False

    @property
    def stop(self) -> bool:
        """Whether ``patience`` evaluations in a row brought no gain."""
        return self.without_gain >= self.patience

    def state(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this object (for checkpoints)."""
        return {"best": self.best, "without_gain": self.without_gain}


class TrainingRun:
    """Checkpointed optimisation of one model in ``out_dir`` (see the module doc).

    ``run_fingerprint`` identifies the settings that fix the weights: a checkpoint with
    another one is refused. ``on_bad_checkpoint``: ``error`` stops on an unreadable or
    foreign checkpoint, ``restart`` logs a warning and trains from step 0;
    ``restart_hint`` says in the error how to train afresh. ``checkpoint_dir``: where the
    checkpoint lives (``out_dir`` unless given: the workflow keeps it outside the job's
    declared outputs, so Snakemake never deletes it), with a copy of the log unless
    ``keep_log`` is off (a worker that is not rank 0, which only reads the checkpoint).
    """

    def __init__(
        self,
        out_dir: Path,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler,
        *,
        device: torch.device,
        bf16: bool,
        grad_clip: float,
        run_fingerprint: str,
        log_columns: Sequence[str],
        on_bad_checkpoint: str = "error",
        restart_hint: str = "delete it to restart",
        checkpoint_dir: Path | None = None,
        keep_log: bool = True,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device
        self.bf16 = bf16
        self.grad_clip = grad_clip
        self.run_fingerprint = run_fingerprint
        self.on_bad_checkpoint = on_bad_checkpoint
        self.restart_hint = restart_hint
        checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else self.out_dir
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        self.checkpoint_path = checkpoint_dir / CHECKPOINT_FILE
        kept = checkpoint_dir / LOG_FILE if keep_log else None
        self.log = TrainLog(self.out_dir / LOG_FILE, log_columns, kept)

    def resume(self) -> tuple[int, dict[str, Any]]:
        """``(step, loop state)`` of the checkpoint, loaded into the training objects.

        ``(0, {})`` without a usable checkpoint. The log keeps the rows up to ``step``
        (rows a killed run wrote after its checkpoint go).
        """
        step, state = self._load()
        self.log.start(step)
        return step, state

    def _load(self) -> tuple[int, dict[str, Any]]:
        if not self.checkpoint_path.exists():
            return 0, {}
        try:
            state = load_checkpoint(self.checkpoint_path, self.run_fingerprint, self.restart_hint)
        except TokstudyError as err:
            if self.on_bad_checkpoint == "error":
                raise
            log.warning("%s; ignoring it and training from step 0", err)
            return 0, {}
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        restore_rng_states(state["rng"])
        log.info("resuming from %s at step %d", self.checkpoint_path, state["step"])
        return int(state["step"]), {k: v for k, v in state.items() if k not in REQUIRED_KEYS}

    @contextlib.contextmanager
    def autocast(self) -> Iterator[None]:
        """The precision the forward pass runs in (bf16 autocast on CUDA when set)."""
        with autocast(self.device, self.bf16):
            yield

    def step(self) -> None:
        """One optimizer update from the accumulated gradients: clipping, step, schedule,
        zero grads."""
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    @property
    def lr(self) -> float:
        """The learning rate of the next step."""
        return self.scheduler.get_last_lr()[0]

    def checkpoint(self, step: int, **loop_state: Any) -> None:
        """Save the training objects, RNG states, ``step`` and the loop's own state."""
        save_checkpoint(
            self.checkpoint_path,
            {
                **loop_state,
                "step": step,
                "fingerprint": self.run_fingerprint,
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "rng": rng_states(),
            },
        )

    def finish(self) -> None:
        """Drop the checkpoint (and its folder when it is not the run's): the run is complete."""
        self.checkpoint_path.unlink(missing_ok=True)
        if self.checkpoint_path.parent != self.out_dir:
            with contextlib.suppress(OSError):
                self.checkpoint_path.parent.rmdir()


def save_atomically(save: Callable[[Path], None], directory: Path, what: str = "the model") -> Path:
    """Run ``save(folder)`` into a temporary folder, then put it in place of ``directory``.

    The old folder is renamed aside (``<name>.old``) before the new one takes its name and
    removed after, so a kill at any point leaves a complete folder under one of the two
    names (:func:`recover_saved` takes the old one back). A write the OS refuses (a full
    disk) is one line naming ``directory`` and the reason; the old folder stays.
    """
    directory = Path(directory)
    recover_saved(directory)
    tmp = directory.with_name(directory.name + ".tmp")
    old = directory.with_name(directory.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    with naming_write_failures(directory, what):
        try:
            save(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if directory.exists():
        os.replace(directory, old)
    os.replace(tmp, directory)
    shutil.rmtree(old, ignore_errors=True)
    return directory


def finish_run(
    out_dir: Path,
    save_model: Callable[[Path], None],
    summary: dict[str, Any],
    summary_file: str,
    checkpoint_dir: Path | None = None,
) -> Path:
    """The end of a finished run: save the model atomically into ``out_dir/model``, write
    the summary marker ``summary_file``, keep the outputs as the run's state in place of
    its checkpoint (:func:`~tokstudy.training.run_state.keep_outputs`); the model folder."""
    model_dir = save_atomically(save_model, out_dir / MODEL_DIR)
    (out_dir / summary_file).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    keep_outputs(out_dir, checkpoint_dir)
    return model_dir


def recover_saved(directory: Path) -> None:
    """After a kill inside :func:`save_atomically`: the old folder back under its name when
    the new one never took it."""
    directory = Path(directory)
    old = directory.with_name(directory.name + ".old")
    if old.is_dir() and not directory.exists():
        os.replace(old, directory)
    shutil.rmtree(old, ignore_errors=True)
