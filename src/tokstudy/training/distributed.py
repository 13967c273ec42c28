"""Several processes per model: DDP launched by torch's elastic launcher (torchrun's engine).

A training function decorated with :func:`per_config_devices`, called with a config that
asks for ``devices: N > 1``, is run through :func:`launch`, which starts ``N`` worker
processes on this machine (one per GPU, NCCL; or on the CPU, gloo), each running the same
function inside a process group. The shared loop (:mod:`tokstudy.training.loop`) then
wraps the model's loss in :class:`~torch.nn.parallel.DistributedDataParallel`, gives each
process its rows of the global batch (the global batch is the config's: ``batch_size`` is
not multiplied; each loss weighted by its share of the batch's loss terms), and lets only
rank 0 write: the log, checkpoints, the best model, the run's summary. The launcher waits
for every worker and returns rank 0's result; a failed worker stops all.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from tokstudy.errors import TokstudyError
from tokstudy.training.device import resolve_device

log = logging.getLogger(__name__)

T = TypeVar("T")


def active() -> bool:
    """Whether this process is one worker of several (a process group is set up)."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    """This worker's rank (0 outside a process group)."""
    return dist.get_rank() if active() else 0


def world_size() -> int:
    """The number of workers (1 outside a process group)."""
    return dist.get_world_size() if active() else 1


def is_main() -> bool:
    """Whether this process writes the run's files (rank 0, or the only process)."""
    return rank() == 0


def check_devices(devices: int, device: torch.device, key: str) -> None:
    """A one-line error naming ``key`` when ``devices`` CUDA GPUs are asked for on a
    machine with fewer, before any process starts."""
    if device.type == "cuda" and devices > torch.cuda.device_count():
        raise TokstudyError(
            f"{key}: {devices} GPUs requested, {torch.cuda.device_count()} CUDA GPU(s) found"
        )


def check_divisible(batch_size: int, parts: int, section: str) -> None:
    """A one-line error naming ``section.batch_size`` unless the global batch splits into
    ``parts`` (devices × accumulated micro-batches) equal shares."""
    if batch_size % parts:
        raise TokstudyError(
            f"{section}.batch_size ({batch_size}) does not split into devices × accumulate "
            f"= {parts} equal parts"
        )


F = TypeVar("F", bound=Callable[..., Any])


def per_config_devices(key: str) -> Callable[[F], F]:
    """Decorator of a training function with an argument ``config`` (``devices``,
    ``device``, ``on_missing_gpu``): with ``devices: N > 1`` and no process group yet, the
    GPUs are checked (:func:`check_devices`, naming ``key``) and the function runs in ``N``
    workers (:func:`launch`), rank 0's result returned; ``on_step`` (a callback, not
    picklable) is not passed to them. Otherwise the function runs here."""

    def decorate(function: F) -> F:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            config = signature.bind(*args, **kwargs).arguments["config"]
            if config.devices <= 1 or active():
                return function(*args, **kwargs)
            device = resolve_device(config.device, config.on_missing_gpu)
            check_devices(config.devices, device, key)
            kwargs.pop("on_step", None)
            return launch(config.devices, run, *args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate


def launch(devices: int, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``function(*args, **kwargs)`` in ``devices`` worker processes on this machine
    (torch's elastic launcher, as ``torchrun --standalone --nproc-per-node devices``);
    rank 0's return value. Workers inherit the environment; the process group's backend
    is NCCL when CUDA is present, gloo otherwise."""
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=devices,
        run_id=uuid.uuid4().hex,
        rdzv_backend="c10d",
        rdzv_endpoint="localhost:0",
        max_restarts=0,
        monitor_interval=0.1,
        start_method="spawn",
    )
    log.info("launching %d worker processes (DDP)", devices)
    results = elastic_launch(config, _worker)(function, args, kwargs)
    return results[0]


def _worker(function: Callable[..., T], args: tuple, kwargs: dict[str, Any]) -> T:
    """One worker: join the process group, run ``function``, leave."""
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s rank {os.environ['RANK']} %(levelname)s %(name)s: %(message)s",
    )
    dist.init_process_group("nccl" if cuda else "gloo")
    try:
        return function(*args, **kwargs)
    finally:
        dist.destroy_process_group()


def shard(batch: Any) -> Any:
    """This worker's rows of ``batch`` (:func:`rows`)."""
    return rows(batch, rank(), world_size())


def rows(batch: Any, index: int, parts: int) -> Any:
    """Part ``index`` of ``parts`` contiguous, equal parts of the rows (dimension 0) of
    ``batch`` (a tensor, or a dict / tuple of them); the last part takes the rest."""
    if isinstance(batch, torch.Tensor):
        share = -(-batch.shape[0] // parts)
        return batch[index * share : (index + 1) * share]
    if isinstance(batch, dict):
        return {key: rows(value, index, parts) for key, value in batch.items()}
    return tuple(rows(value, index, parts) for value in batch)


def sum_over_workers(values: dict[str, float]) -> dict[str, float]:
    """``values`` summed over every worker (a no-op for one process)."""
    if not active():
        return values
    keys = sorted(values)
    tensor = torch.tensor([float(values[key]) for key in keys], dtype=torch.float64)
    if dist.get_backend() == "nccl":
        tensor = tensor.cuda()
    dist.all_reduce(tensor)
    return dict(zip(keys, tensor.tolist(), strict=True))


def from_main(value: T) -> T:
    """Rank 0's ``value`` on every worker (a no-op for one process)."""
    if not active():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]
