"""How many shapes the GPU check's NMT batches take, and what share of the positions they
compute are sentences' tokens, for token-budget batches as they are, padded to a multiple
and in the fixed shapes of ``nmt.train.cuda_graphs`` (issue 36: each new shape records a
CUDA graph first; padding is compute that counts for nothing).

Runs on any machine (no model is trained: only the batches are built).

    python scripts/nmt_batch_shapes.py [--steps 300] [--smoke]
"""

from __future__ import annotations

import argparse
import dataclasses

from gpu_check import GPU_SIZES, SMOKE_SIZES, Sizes, nmt_kind  # scripts/ is on the path


def batching_variants(sizes: Sizes) -> list[tuple[str, Sizes]]:
    """The batchings compared: as they are, padded to × 8, fixed shapes at 8 widths."""
    return [
        ("token budget", sizes),
        ("padded to x8", dataclasses.replace(sizes, nmt_pad_to_multiple=8)),
        (
            f"fixed shapes (cuda_graphs), x{sizes.nmt_length // 8}",
            dataclasses.replace(
                sizes, nmt_pad_to_multiple=sizes.nmt_length // 8, nmt_cuda_graphs=True
            ),
        ),
    ]


def shape_figures(sizes: Sizes, steps: int) -> tuple[int, float, float]:
    """Over the first ``steps`` batches: distinct shapes (source and target), the share of
    computed positions that are tokens of the sentences, tokens a step."""
    _, _, task, _, _ = nmt_kind(dataclasses.replace(sizes, device="cpu"), None, steps)
    task.start(0)
    shapes, tokens, positions = set(), 0, 0
    for step in range(steps):
        batch, batch_tokens = task.batch(step)
        shapes.add((tuple(batch["input_ids"].shape), tuple(batch["labels"].shape)))
        tokens += batch_tokens
        positions += batch["input_ids"].numel() + batch["labels"].numel()
    return len(shapes), tokens / positions, tokens / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--smoke", action="store_true", help="the check's toy sizes")
    args = parser.parse_args()
    sizes = dataclasses.replace(SMOKE_SIZES if args.smoke else GPU_SIZES, nmt_preset="tiny")
    print(
        f"NMT batches of the GPU check ({sizes.nmt_tokens}-token budget, pairs of 8 to "
        f"{sizes.nmt_length} tokens), first {args.steps}:"
    )
    print("| batching | shapes | tokens / positions computed | tokens a step |")
    print("|---|---:|---:|---:|")
    for label, variant in batching_variants(sizes):
        shapes, share, per_step = shape_figures(variant, args.steps)
        print(f"| {label} | {shapes} | {100 * share:.1f} % | {per_step / 1e3:.1f} k |")


if __name__ == "__main__":
    main()
