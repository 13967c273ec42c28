"""What one training step of each model kind asks of the host (issue 36): the operators it
dispatches, and those that make the host wait for the device, counted on any machine (the
CPU runs the same Python and dispatcher path as CUDA up to the kernels).

For each kind (``--kinds``: the GPU check's models, at its layer sizes with ``--base`` and
its toy sizes otherwise, with a short batch: the count does not depend on the batch's
size) one micro-batch runs its forward pass and loss, then its backward pass, under a
recorder of every dispatched operator. On a GPU each is a kernel launch or a view, each
costing the host microseconds, whatever the tensors' sizes: a step whose kernels are
short waits on the host. The optimizer update is left out (on CUDA it is the fused AdamW
kernel).

    python scripts/step_operators.py [--kinds clm,mlm,nmt] [--base]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(_spec)
sys.modules["gpu_check"] = gpu_check  # its dataclasses look their module up there
_spec.loader.exec_module(gpu_check)

#: operators that make the host wait for a CUDA device (they return a value or a shape
#: that depends on the tensor's contents); boolean-mask indexing too
SYNCHRONISING = frozenset(
    {
        "aten._local_scalar_dense.default",  # .item(), bool(), int(), float() of a tensor
        "aten.nonzero.default",
        "aten.masked_select.default",
        "aten.is_nonzero.default",
        "aten.equal.default",
        "aten._unique2.default",
        "aten.unique_consecutive.default",
        "aten.repeat_interleave.Tensor",
    }
)
#: the base models' layers at a short batch: the GPU check's sizes with few tokens
BASE_SIZES = dataclasses.replace(
    gpu_check.GPU_SIZES,
    device="cpu",
    clm_batch=1,
    context=64,
    bert_batch=1,
    bert_length=64,
    nmt_tokens=512,
    nmt_length=32,
    vocab=1000,
)


class StepOperators(TorchDispatchMode):
    """Counts every operator dispatched while active; records the synchronising ones
    with the names of the functions they were called from."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.waits: list[tuple[str, set[str]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        self.counts[name] += 1
        masks = name == "aten.index.Tensor" and any(
            index is not None and index.dtype == torch.bool for index in args[1]
        )
        if name in SYNCHRONISING or masks:
            self.waits.append((name, {frame.name for frame in traceback.extract_stack()}))
        return func(*args, **(kwargs or {}))


def record_step(
    task: Any, model: torch.nn.Module, step: int
) -> tuple[Any, StepOperators, StepOperators]:
    """One micro-batch of ``task`` at ``step``: the host's batch (``task.on_host``, not
    recorded), and the recorded operators of its forward pass and loss and of its
    backward pass."""
    batch = task.on_host(task.batch(step)[0])
    with StepOperators() as forward:
        loss, _ = task.loss(model, batch)
    with StepOperators() as backward:
        loss.backward()
    return batch, forward, backward


def kind_table(names: list[str], sizes: Any) -> str:
    """One row per kind: operators of the forward and backward pass of one micro-batch,
    and the host's waits for the device (the function that asked, where known)."""
    rows = [
        "| model | forward operators | backward operators | host waits for the device |",
        "|---|---:|---:|---|",
    ]
    for name in names:
        torch.manual_seed(0)
        label, model, task, _, _ = gpu_check.KIND_NAMES[name](sizes, False, 2)
        task.start(0)
        _, forward, backward = record_step(task, model, 0)
        waits = forward.waits + backward.waits
        where = Counter(_asking(callers) for _, callers in waits)
        said = ", ".join(f"{count} in {caller}" for caller, count in sorted(where.items()))
        rows.append(
            f"| {label} | {sum(forward.counts.values())} | {sum(backward.counts.values())} | "
            f"{len(waits)}{f' ({said})' if said else ''} |"
        )
    return "\n".join(rows)


def _asking(callers: set[str]) -> str:
    """The known function of the project or of transformers that asked for a value."""
    known = ("create_causal_mask", "create_bidirectional_mask", "loss", "on_host")
    return next((name for name in known if name in callers), "another function")


def main() -> int:
    """Print the table of the chosen kinds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="clm,mlm,nmt", help="comma-separated: clm, mlm, nmt")
    parser.add_argument("--base", action="store_true", help="the GPU check's model sizes")
    args = parser.parse_args()
    names = gpu_check.kind_names(parser, args.kinds)
    print(kind_table(names, BASE_SIZES if args.base else gpu_check.SMOKE_SIZES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
