"""The one training loop of every model the study trains (clm, MLM pretraining, NMT).

It has nanoGPT's shape: one loop, read top to bottom, that owns what every task shares:
device placement of the batches, bf16 autocast, ``torch.compile`` of the loss, the
optimizer update (gradient accumulation, clipping, schedule), checkpoints and resuming
(:class:`TrainingRun`), evaluation steps and early stopping, the CSV log with throughput
and MFU. A training task (:class:`TrainingTask`; not a downstream task of
:mod:`tokstudy.models.task_registry`) says only what differs: its batches, its loss, its
log values and its evaluation.

Per step::

    batch (prepared while the previous step runs) -> [per micro-batch: loss under
    autocast -> backward] -> update
    -> [log step: one host sync, log row; evaluation step: evaluate, early stopping]
    -> [checkpoint step] -> on_step(done)

The batch of step ``s`` depends only on ``(seed, s)`` (or on the task's own sequence),
the RNG states are checkpointed, so a resumed run ends bitwise equal to an uninterrupted
one on the same device.

Run by several worker processes (:mod:`tokstudy.training.distributed`), the loop wraps
the model in DDP, gives each worker its rows of every batch, sums the log values over
the workers, evaluates on rank 0 (every worker takes its result, so all stop together)
and lets rank 0 alone write the log, the checkpoints and the best model.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from tokstudy.runtime.progress import progress
from tokstudy.training import distributed
from tokstudy.training.config import RunSettings
from tokstudy.training.core import EarlyStopping, Throughput, TrainingRun
from tokstudy.training.device import peak_flops, prepare_device, resolve_compile
from tokstudy.training.optimizer import Optimization

log = logging.getLogger(__name__)

#: the columns the loop adds to every task's log
LOOP_COLUMNS = ("lr", "tokens_per_s", "flops_per_s", "mfu", "elapsed_s")


class _LossModule(torch.nn.Module):
    """``forward(batch)`` is ``loss(model, batch)``: the module DDP wraps."""

    def __init__(self, model: torch.nn.Module, loss: Callable[..., Any]) -> None:
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch: Any) -> Any:
        return self.loss(self.model, batch)


@dataclass(frozen=True)
class LoopSettings:
    """How and where the loop runs: the run's folder ``out_dir`` and ``run_fingerprint``
    (the hash of the settings that fix its weights, which its checkpoint must match),
    ``steps`` updates, a log row every ``log_every`` steps (and at
    every evaluation and the last step), an evaluation every ``eval_every`` steps and at
    the last (0: none), early stopping after ``patience`` evaluations without gain (0:
    off), a checkpoint every ``checkpoint_every`` steps. ``flops_per_token``: training
    FLOPs of one token (for FLOP/s and MFU; 0: not counted), unless the task counts each
    batch's FLOPs itself (:meth:`TrainingTask.flops`)."""

    steps: int
    log_every: int
    checkpoint_every: int
    grad_clip: float
    out_dir: Path
    run_fingerprint: str
    #: micro-batches per step: each step's batch is cut into this many parts, their
    #: gradients summed before the one update (the same global batch in less memory)
    accumulate: int = 1
    bf16: bool = True
    #: ``None``: the task's choice on CUDA, eager on the CPU (:func:`resolve_compile`)
    compile: bool | None = None
    eval_every: int = 0
    patience: int = 0
    flops_per_token: float = 0.0
    on_bad_checkpoint: str = "error"
    restart_hint: str = "delete it to restart"
    checkpoint_dir: Path | None = None
    #: the config key of ``compile`` in error messages
    compile_key: str = "compile"

    @classmethod
    def of_run(cls, run: RunSettings, steps: int, **task: Any) -> LoopSettings:
        """The settings of a run of ``steps`` updates from its training section's run keys
        (:class:`~tokstudy.training.config.RunSettings`; a ``log_every`` or
        ``checkpoint_every`` of 0 is ``eval_every``) and the run's own (``out_dir``,
        ``run_fingerprint``, ``eval_every``, ``patience``, ``flops_per_token``,
        ``checkpoint_dir``)."""
        eval_every = task.get("eval_every", 0)
        return cls(
            steps=steps,
            log_every=run.log_every or eval_every,
            checkpoint_every=run.checkpoint_every or eval_every,
            grad_clip=run.grad_clip,
            accumulate=run.accumulate,
            bf16=run.bf16,
            compile=run.compile,
            compile_key=f"{run.section}.compile",
            on_bad_checkpoint=run.on_bad_checkpoint,
            restart_hint=f"delete it to restart, or set {run.section}.on_bad_checkpoint: restart",
            **task,
        )


class TrainingTask:
    """What a training task adds to the loop (override what applies).

    ``log_columns``: the task's own columns of ``train_log.csv`` (after ``step``).
    """

    log_columns: tuple[str, ...] = ("loss",)
    #: the values of :meth:`loss` that are means over its terms: weighted like the loss,
    #: so that summed over workers and micro-batches they are the step's mean
    mean_values: tuple[str, ...] = ("loss",)
    #: whether the batch shape changes from step to step (:func:`prepare_device`)
    variable_shapes: bool = False
    #: whether the batches take a few fixed shapes: a loss compiled on CUDA is then replayed
    #: as CUDA graphs, one recorded per shape (``torch.compile``'s ``reduce-overhead``)
    fixed_shapes: bool = False
    #: whether the loss is compiled on CUDA when the config leaves ``compile`` out: where
    #: it measured faster than eager (docs/gpu.md)
    compile_on_cuda: bool = False

    def start(self, step: int) -> None:
        """Called once before the first step: ``step`` is 0, or the resumed step."""

    def batch(self, step: int) -> tuple[Any, int]:
        """The CPU batch of ``step`` (tensors, in a dict or tuple) and its token count."""
        raise NotImplementedError

    def loss(self, model: torch.nn.Module, batch: Any) -> tuple[torch.Tensor, dict[str, Any]]:
        """The loss to minimise (a mean over its :meth:`loss_terms`) and the values the log
        sums over steps (tensors or numbers)."""
        raise NotImplementedError

    def flops(self, batch: Any, tokens: int, flops_per_token: float) -> float:
        """Training FLOPs (forward and backward) of the CPU ``batch`` of ``tokens`` tokens:
        ``tokens × flops_per_token`` (:attr:`LoopSettings.flops_per_token`) unless the task's
        work per token depends on the batch (e.g. on its sentences' lengths)."""
        return tokens * flops_per_token

    def on_host(self, batch: Any) -> Any:
        """A micro-batch's last step on the host, after the batch is cut into the workers'
        and micro-batches' rows and before its copy to the device (unchanged unless a task
        adds to it: what the host computes here the device need not wait for)."""
        return batch

    def loss_terms(self, batch: Any) -> int:
        """How many terms the loss of ``batch`` (a CPU batch, or a worker's or micro-batch's
        rows of it) averages over; the rows unless a task counts otherwise."""
        first = next(iter(batch.values())) if isinstance(batch, Mapping) else batch[0]
        return int(first.shape[0])

    def log_values(self, sums: Mapping[str, float], steps: int, done: int) -> dict[str, Any]:
        """The task's values of the log row of step ``done`` from the sums of ``steps`` steps
        (each step's values summed over its workers and micro-batches)."""
        return {"loss": sums["loss"] / steps}

    def evaluate(self, model: torch.nn.Module, step: int) -> tuple[dict[str, Any], float]:
        """Values for the log row and the score early stopping maximises."""
        raise NotImplementedError

    def improved(self, model: torch.nn.Module, step: int) -> None:
        """Called when an evaluation is the best so far (e.g. to save the model)."""


@dataclass
class LoopResult:
    """What a finished run reports. ``tokens``, ``train_seconds`` and
    ``train_cpu_seconds`` count this process; ``elapsed_s`` the whole run, resumes included."""

    steps: int
    stopped_early: bool
    final_loss: float
    best: dict[str, Any] | None
    tokens: int
    train_seconds: float
    train_cpu_seconds: float
    elapsed_s: float
    tokens_per_s: float
    flops_per_s: float
    mfu: float | None
    extra: dict[str, Any] = field(default_factory=dict)


def to_device(batch: Any, device: torch.device) -> Any:
    """``batch`` (a tensor, or a dict / tuple of them) on ``device``, copied asynchronously."""
    if isinstance(batch, torch.Tensor):
        if device.type == "cuda":
            return batch.pin_memory().to(device, non_blocking=True)
        return batch.to(device)
    if isinstance(batch, Mapping):
        return {key: to_device(value, device) for key, value in batch.items()}
    return tuple(to_device(value, device) for value in batch)


def _weighted(
    values: Mapping[str, Any], names: tuple[str, ...], weight: float
) -> Mapping[str, Any]:
    """``values`` with those in ``names`` multiplied by ``weight`` (unchanged when it is 1)."""
    if weight == 1:
        return values
    return {key: value * weight if key in names else value for key, value in values.items()}


def _sum(sums: dict[str, Any], values: Mapping[str, Any]) -> None:
    """Add ``values`` to ``sums``: new tensors, never a step's own outputs, which a CUDA
    graph's next replay overwrites."""
    for key, value in values.items():
        value = value.detach() if isinstance(value, torch.Tensor) else value
        if key in sums:
            sums[key] = sums[key] + value
        else:
            sums[key] = value.clone() if isinstance(value, torch.Tensor) else value


def compiled_loss(task: TrainingTask, device: torch.device) -> tuple[Callable[..., Any], bool]:
    """``task.loss`` through ``torch.compile``, and whether its steps replay CUDA graphs:
    for variable shapes one graph with symbolic sizes from the start (not a first graph
    specialised to the first batch's shape, then a second when the shape changes); for
    fixed shapes on CUDA, CUDA graphs (``reduce-overhead``), one recorded per shape."""
    graphs = task.fixed_shapes and device.type == "cuda"
    dynamic = True if task.variable_shapes else None
    mode = "reduce-overhead" if graphs else None
    return torch.compile(task.loss, dynamic=dynamic, mode=mode), graphs


def train(
    model: torch.nn.Module,
    optimization: Optimization,
    task: TrainingTask,
    settings: LoopSettings,
    *,
    device: torch.device,
    on_step: Callable[[int], None] | None = None,
) -> LoopResult:
    """Train ``model`` on ``task`` for ``settings.steps`` steps in ``settings.out_dir``
    (resuming from its checkpoint) with ``optimization``
    (:func:`~tokstudy.training.optimizer.build_optimizer`); ``on_step(done)`` runs after
    each step (progress hooks, tests)."""
    prepare_device(device, task.variable_shapes)
    compiling = resolve_compile(
        settings.compile, device, settings.compile_key, task.compile_on_cuda
    )
    main, workers = distributed.is_main(), distributed.world_size()
    # only rank 0 writes the run's folder; the others log into a scratch folder
    scratch = None if main else tempfile.TemporaryDirectory(prefix="tokstudy-rank-")
    run = TrainingRun(
        settings.out_dir if main else Path(scratch.name),
        model,
        *optimization,
        device=device,
        bf16=settings.bf16,
        grad_clip=settings.grad_clip,
        run_fingerprint=settings.run_fingerprint,
        log_columns=("step", *task.log_columns, *LOOP_COLUMNS),
        on_bad_checkpoint=settings.on_bad_checkpoint,
        restart_hint=settings.restart_hint,
        checkpoint_dir=settings.checkpoint_dir or settings.out_dir,
        keep_log=main,
    )
    start, state = run.resume()
    stopper = EarlyStopping(settings.patience, "score", **state.get("stopping", {}))
    loss_of, graphs = compiled_loss(task, device) if compiling else (task.loss, False)
    # several workers: DDP averages the gradients of each worker's share of the batch; it
    # wraps the loss (not the model), so a task's loss sees the model itself, submodules
    # included, and DDP's forward still runs at every step
    net: torch.nn.Module = _LossModule(model, loss_of)
    if workers > 1:
        gpu = [torch.cuda.current_device()] if device.type == "cuda" else None
        net = DistributedDataParallel(net, device_ids=gpu)
    peak = run_peak(device, settings.bf16, workers)
    task.start(start)
    model.train()
    sums: dict[str, Any] = {}
    interval, throughput, tokens_done, flops_done = 0, Throughput(), 0, 0.0
    started, cpu_started = time.perf_counter(), time.process_time()
    elapsed_before = float(state.get("elapsed_s", 0.0))
    done, last_loss, stopped_early, row = start, float("nan"), False, {}
    upcoming = task.batch(start) if start < settings.steps else None
    parts = settings.accumulate
    bar = progress(settings.steps, "training", log, unit="step", initial=start, disable=not main)
    for step in range(start, settings.steps):
        cpu_batch, tokens = upcoming
        share = distributed.shard(cpu_batch)
        terms = max(task.loss_terms(cpu_batch), 1)
        for part in range(parts):
            micro = distributed.rows(share, part, parts) if parts > 1 else share
            # a micro-batch's mean loss counts by its share of the step's loss terms; × the
            # workers, since DDP averages their gradients: the step's gradient is that of
            # the mean over the whole batch, however it is cut
            weight = workers * task.loss_terms(micro) / terms
            batch = to_device(task.on_host(micro), device)
            # DDP averages the gradients over the workers at the last micro-batch only
            syncing = workers == 1 or part == parts - 1
            with contextlib.nullcontext() if syncing else net.no_sync():
                if graphs:  # a new step: the last replay's outputs may be overwritten
                    torch.compiler.cudagraph_mark_step_begin()
                with run.autocast():
                    loss, values = net(batch)
                if part == 0:  # the next batch is built on the host while the device works
                    upcoming = task.batch(step + 1) if step + 1 < settings.steps else None
                (loss * weight if weight != 1 else loss).backward()
            # the log sums over workers: a mean value counts by its share of the terms
            _sum(sums, _weighted(values, task.mean_values, weight / workers))
        run.step()
        if step == start:
            log.info(
                "first step: %.1f s%s",
                time.perf_counter() - started,
                " (torch.compile compiles the loss here)" if compiling else "",
            )
        throughput.add(tokens, task.flops(cpu_batch, tokens, settings.flops_per_token))
        interval, done = interval + 1, step + 1
        bar.update(1)
        evaluate = settings.eval_every > 0 and (
            done % settings.eval_every == 0 or done == settings.steps
        )
        if done % settings.log_every == 0 or evaluate or done == settings.steps:
            # the one host-device synchronisation of the loop: reading the sums (of every
            # worker's share)
            summed = distributed.sum_over_workers({k: float(v) for k, v in sums.items()})
            task_values = task.log_values(summed, interval, done)
            tokens_per_s, flops_per_s = throughput.per_second()
            row = {
                "step": done,
                **task_values,
                "lr": run.lr,
                "tokens_per_s": tokens_per_s,
                "flops_per_s": flops_per_s,
                "mfu": flops_per_s / peak if peak else "",
                "elapsed_s": elapsed_before + time.perf_counter() - started,
            }
            last_loss = task_values["loss"]
            bar.set_postfix_str(f"loss {last_loss:.4g}", refresh=False)
            tokens_done += throughput.tokens
            flops_done += throughput.flops
            if evaluate:
                # rank 0 evaluates; every worker takes its result (one stopping decision)
                values, score = distributed.from_main(task.evaluate(model, done) if main else None)
                model.train()
                row.update(values)
                if stopper.update({"step": done, "score": score, **values}) and main:
                    task.improved(model, done)
            run.log.append(row)
            log.info(
                "step %d/%d %s %.0f tokens/s",
                done,
                settings.steps,
                " ".join(f"{k} {v:.4g}" for k, v in row.items() if _shown(k, v)),
                tokens_per_s,
            )
            sums, interval = {}, 0
            throughput.restart()
        stopped_early = settings.patience > 0 and evaluate and stopper.stop
        if stopped_early:
            log.warning(
                "early stopping at step %d of %d: %d evaluations without gain",
                done,
                settings.steps,
                settings.patience,
            )
            break
        if main and done % settings.checkpoint_every == 0 and done < settings.steps:
            run.checkpoint(
                done,
                stopping=stopper.state(),
                elapsed_s=elapsed_before + time.perf_counter() - started,
            )
        if on_step is not None:
            on_step(done)
    bar.close()
    seconds = time.perf_counter() - started
    if scratch is not None:
        scratch.cleanup()
    tokens_per_s = tokens_done / max(seconds, 1e-9)
    flops_per_s = flops_done / max(seconds, 1e-9)
    return LoopResult(
        steps=done,
        stopped_early=stopped_early,
        final_loss=last_loss,
        best=stopper.best,
        tokens=tokens_done,
        train_seconds=seconds,
        # CPU time of this process: the wall time on an idle machine at one thread
        train_cpu_seconds=time.process_time() - cpu_started,
        elapsed_s=elapsed_before + seconds,
        tokens_per_s=tokens_per_s,
        flops_per_s=flops_per_s,
        mfu=flops_per_s / peak if peak else None,
        extra={"peak_flops": peak, "compiled": compiling, "cuda_graphs": graphs},
    )


def run_peak(device: torch.device, bf16: bool, workers: int) -> float | None:
    """The peak FLOP/s that MFU divides by: one device's (:func:`peak_flops`) times the
    ``workers`` devices that share each step's batch (its tokens and FLOPs are counted
    whole)."""
    peak = peak_flops(device, bf16)
    return peak * workers if peak else None


def _shown(key: str, value: Any) -> bool:
    return key not in {"step", "tokens_per_s", "elapsed_s"} and isinstance(value, int | float)


def result_summary(result: LoopResult) -> dict[str, Any]:
    """The loop's part of a run's summary file (``train.json``, ``pretrain.json``)."""
    return {
        "steps": result.steps,
        "stopped_early": result.stopped_early,
        "final_loss": result.final_loss,
        "tokens_per_s": result.tokens_per_s,
        "flops_per_s": result.flops_per_s,
        "mfu": result.mfu,
        "peak_flops": result.extra.get("peak_flops"),
        "compiled": result.extra.get("compiled"),
        "cuda_graphs": result.extra.get("cuda_graphs"),
        "train_seconds": result.train_seconds,
        "train_cpu_seconds": result.train_cpu_seconds,
    }
