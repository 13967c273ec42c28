"""Benchmark: this machine's fp32 matmul peak against the training FLOP/s of the CPU ``clm``
presets.

Prints, with the hardware description:

* the fp32 matmul peak: FLOP/s of an ``n × n`` by ``n × n`` ``torch.matmul`` (2·n³ FLOPs),
  best of several repeats, at 1 and 2 threads and at every core;
* per preset (``base`` too): training FLOPs per token counted on the meta device;
* per CPU preset (``tiny``, ``small``): achieved training FLOP/s of full steps (forward,
  backward, AdamW) on random tokens at the preset's batch and context, FLOPs counted by
  6 · matmul parameters · tokens + 12 · layers · context · hidden · tokens
  (:func:`tokstudy.models.clm.model.train_flops_per_token`, which equals what
  ``torch.utils.flop_counter.FlopCounterMode`` counts on the meta device; on the CPU it
  counts less, the CPU attention kernel having no FLOP formula, printed beside), and the
  ratio to the peak at the same thread count; with ``--compile``, also with the loss
  compiled as ``models.clm.compile: true`` trains (the first step's seconds include compiling).

Usage: python scripts/bench_clm_flops.py [--threads 1 2] [--steps N] [--size N] [--compile]
       [--shape small=16x256 ...]   (a preset's batch x context instead of the study's)
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from gpu_check import Vocabulary  # scripts/ is on the path of a script run from it
from torch.utils.flop_counter import FlopCounterMode
from transformers import LlamaForCausalLM

from tokstudy.models.clm.model import llama_config, train_flops_per_token
from tokstudy.models.clm.train import next_token_loss
from tokstudy.models.config import ClmConfig
from tokstudy.training.device import describe

#: batch and context of each CPU preset in the benchmark (the predictive study's shapes)
SHAPES = {"tiny": (16, 128), "small": (8, 128)}
VOCAB = 4000


def matmul_peak(size: int, repeats: int = 5) -> float:
    """Best FLOP/s of an fp32 ``size × size`` matmul over ``repeats`` timed batches."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.matmul(a, b)
    inner = max(1, int(2e9 // (2 * size**3)))
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            torch.matmul(a, b)
        best = max(best, inner * 2 * size**3 / (time.perf_counter() - start))
    return best


def train_step(loss_of, model, optimizer, inputs, targets) -> None:
    """One optimizer step of ``loss_of`` (:func:`tokstudy.models.clm.train.next_token_loss`)."""
    loss = loss_of(model, inputs, targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def preset_flops(preset: str, steps: int, compile_loss: bool) -> dict[str, float]:
    """Counted and analytic FLOPs per step, the first step's seconds (compilation included)
    and the best FLOP/s over ``steps`` steps, with the loss the training loop runs."""
    batch, context = SHAPES[preset]
    config = ClmConfig(preset=preset, context=context, batch_size=batch)
    torch.manual_seed(0)
    model_config = llama_config(Vocabulary(VOCAB), config)
    model = LlamaForCausalLM(model_config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, VOCAB, (batch, context + 1))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    with FlopCounterMode(display=False) as counter:
        train_step(next_token_loss, model, optimizer, inputs, targets)
    counted = counter.get_total_flops()
    # what the training loop runs: the loss, compiled or not (tokstudy.training.loop)
    loss_of = torch.compile(next_token_loss) if compile_loss else next_token_loss
    start = time.perf_counter()
    train_step(loss_of, model, optimizer, inputs, targets)  # warm-up (and compilation)
    first = time.perf_counter() - start
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        train_step(loss_of, model, optimizer, inputs, targets)
        times.append(time.perf_counter() - start)
    best = min(times)
    analytic = train_flops_per_token(model_config, context) * batch * context
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "counted": counted,
        "analytic": analytic,
        "first_seconds": first,
        "seconds": best,
        "flops_per_s": analytic / best,
        "tokens_per_s": batch * context / best,
    }


def counted_flops_per_token(preset: str, context: int, batch: int = 2) -> float:
    """FLOPs of one training step (forward and backward) per token, counted by
    ``FlopCounterMode`` on the meta device (no computation: any preset, e.g. ``base``)."""
    config = ClmConfig(preset=preset, context=context)
    with torch.device("meta"):
        model = LlamaForCausalLM(llama_config(Vocabulary(VOCAB), config))
        tokens = torch.randint(0, VOCAB, (batch, context + 1))
    with FlopCounterMode(display=False) as counter:
        logits = model(input_ids=tokens[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1)
        )
        loss.backward()
    return counter.get_total_flops() / (batch * context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--shape", nargs="+", default=[], metavar="PRESET=BATCHxCONTEXT")
    args = parser.parse_args()
    for shape in args.shape:
        preset, dims = shape.split("=")
        batch, context = dims.split("x")
        SHAPES[preset] = (int(batch), int(context))
    print(
        f"machine: {describe(torch.device('cpu'))}, {os.cpu_count()} cores, "
        f"torch {torch.__version__}"
    )
    for preset, context in (("tiny", 128), ("small", 256), ("base", 1024)):
        config = llama_config(Vocabulary(VOCAB), ClmConfig(preset=preset, context=context))
        print(
            f"{preset} at context {context}, vocabulary {VOCAB}: "
            f"{counted_flops_per_token(preset, context) / 1e6:.1f} MFLOP/token counted "
            f"(forward + backward), analytic "
            f"{train_flops_per_token(config, context) / 1e6:.1f}"
        )
    for threads in sorted(set(args.threads) | {os.cpu_count() or 1}):
        torch.set_num_threads(threads)
        peak = matmul_peak(args.size)
        print(f"\n{threads} thread(s): fp32 matmul {args.size}^2 peak {peak / 1e9:.1f} GFLOP/s")
        for preset in SHAPES:
            for compiled in (False, True) if args.compile else (False,):
                r = preset_flops(preset, args.steps, compiled)
                name = preset + (" compiled" if compiled else "")
                print(
                    f"  {name:<15} {r['parameters'] / 1e6:.2f} M params, batch x context "
                    f"{SHAPES[preset][0]} x {SHAPES[preset][1]}: {r['seconds'] * 1e3:.0f} ms/step, "
                    f"{r['tokens_per_s']:.0f} tokens/s, {r['flops_per_s'] / 1e9:.1f} GFLOP/s "
                    f"(analytic {r['analytic'] / 1e9:.2f} GFLOP/step, "
                    f"counted on the CPU {r['counted'] / 1e9:.2f}) = "
                    f"{100 * r['flops_per_s'] / peak:.0f} % of peak; first step "
                    f"{r['first_seconds']:.1f} s"
                )


if __name__ == "__main__":
    main()
