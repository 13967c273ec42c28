"""Where a model kind's training step spends its time (issue 36): ``torch.profiler`` over a
few steps of the GPU check's model kinds, trained through the project's own loop.

For each kind (``--kinds``, the GPU check's shapes, batch × ``--batch-scale``) it trains
``wait + warmup + active`` steps, profiles the last ``active`` ones, and prints the loop's
tokens/s and MFU of the steps after ``wait`` (slowed by the profiler: compare rows of one
run, not with the GPU check's table) and the operators and kernels with the most GPU
time (the CPU's on a machine without one). ``--compile`` compiles the loss; the default
is the loop's choice. ``--variants 3,8`` profiles those of the GPU check's variants
(``VARIANTS``, numbered from 1 in the order of its table) instead, each with its own
compile setting and fewest steps.

    python scripts/gpu_profile.py [--kinds mlm,clm,nmt] [--batch-scale 1] [--compile]
                                  [--variants N,M] [--smoke]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import time
from pathlib import Path

import pandas as pd
import torch
from torch.profiler import ProfilerActivity, profile, schedule

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
_spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(_spec)
sys.modules["gpu_check"] = gpu_check  # its dataclasses look their module up there
_spec.loader.exec_module(gpu_check)

WAIT, WARMUP, ACTIVE = 8, 2, 4
#: the batch dimension of each kind in ``gpu_check.Sizes``
BATCH_FIELD = {"clm": "clm_batch", "mlm": "bert_batch", "nmt": "nmt_tokens"}


def profile_kind(
    name: str, sizes, compile_loss: bool | None, rows: int = 14, min_steps: int = 0
) -> pd.DataFrame:
    """Train kind ``name`` for ``min_steps`` steps or more, the last ``ACTIVE`` under the
    profiler; print its speed line and top operators; return the loop's log."""
    wait = max(WAIT, min_steps - WARMUP - ACTIVE)
    steps = wait + WARMUP + ACTIVE
    cuda = sizes.device == "cuda"
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    started = time.perf_counter()
    with profile(
        activities=activities, schedule=schedule(wait=wait, warmup=WARMUP, active=ACTIVE)
    ) as profiler:
        label, result, log = gpu_check.train_kind(
            gpu_check.KIND_NAMES[name],
            sizes,
            compile_loss,
            steps,
            log_every=wait,
            on_step=lambda done: profiler.step(),
        )
    last = log.iloc[-1]
    step_ms = 1000 * (log["elapsed_s"].diff() / log["step"].diff()).iloc[-1]
    mfu = "" if pd.isna(last["mfu"]) else f", MFU {100 * float(last['mfu']):.1f} %"
    compiled = "loss compiled" if result.extra["compiled"] else "eager"
    print(
        f"\n### {label}, {compiled}: {time.perf_counter() - started:.0f} s in all\n"
        f"steps {int(log['step'].iloc[-2]) + 1}-{steps} (profiled: {wait + WARMUP + 1}-{steps}): "
        f"{float(last['tokens_per_s']) / 1e3:.1f} k tokens/s{mfu}, {step_ms:.1f} ms a step",
        flush=True,
    )
    sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    print(profiler.key_averages().table(sort_by=sort, row_limit=rows), flush=True)
    return log


def variant_numbers(parser: argparse.ArgumentParser, text: str) -> list[int]:
    """The numbers (from 1) of a ``--variants`` value; one line naming a bad one, status 2."""
    count = len(gpu_check.VARIANTS)
    numbers = []
    for item in text.split(","):
        if not item.isdigit() or not 1 <= int(item) <= count:
            parser.error(f"--variants: {item!r} is not a variant number (1 to {count})")
        numbers.append(int(item))
    return numbers


def main() -> int:
    """Profile the chosen kinds; 2 without a CUDA GPU (unless ``--smoke``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="mlm,clm,nmt", help="comma-separated: clm, mlm, nmt")
    parser.add_argument("--batch-scale", type=int, default=1, help="batch size × this")
    parser.add_argument("--compile", action="store_true", help="compile the loss")
    parser.add_argument(
        "--variants",
        default="",
        help="profile these of gpu_check's VARIANTS instead (numbers from 1, comma-separated)",
    )
    parser.add_argument("--smoke", action="store_true", help="toy sizes on the CPU (tests)")
    args = parser.parse_args()
    names = gpu_check.kind_names(parser, args.kinds)
    if args.batch_scale < 1:
        parser.error(f"--batch-scale: {args.batch_scale} is not a positive whole number")
    variants = variant_numbers(parser, args.variants) if args.variants else []
    if not args.smoke and not torch.cuda.is_available():
        print(gpu_check.NO_GPU.replace("gpu_check", "gpu_profile", 1), file=sys.stderr)
        return 2
    base = gpu_check.SMOKE_SIZES if args.smoke else gpu_check.GPU_SIZES
    for number in variants:
        variant = gpu_check.VARIANTS[number - 1]
        sizes = variant.change(base)
        profile_kind(variant.kind, sizes, variant.compile_loss, min_steps=variant.min_steps)
        if base.device == "cuda":
            torch.cuda.empty_cache()
    for name in [] if variants else names:
        field = BATCH_FIELD[name]
        sizes = dataclasses.replace(base, **{field: getattr(base, field) * args.batch_scale})
        profile_kind(name, sizes, True if args.compile else None)
        if sizes.device == "cuda":
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
