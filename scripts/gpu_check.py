"""The GPU check of issue 36: training speed and MFU of the study's three model kinds.

On one CUDA GPU it trains each kind (clm ``base`` at context 1024, BERT-base MLM, NMT
``base``) for a few steps through the project's own training loop
(:func:`tokstudy.training.loop.train`) on random tokens, eager and with the loss compiled,
and prints tokens/s, FLOP/s and MFU (the share of the GPU's dense bf16 peak) per row.
Needs torch and transformers, not Snakemake. On a machine without a CUDA GPU it prints one
line and exits with status 2.

    python scripts/gpu_check.py [--steps 30]

Still to come (issue 36 item 5): the small GPU study through Snakemake with its wall time
and per-job tokens/s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

NO_GPU = "gpu_check: no CUDA GPU visible (torch.cuda.is_available() is false); run it on a machine with one NVIDIA GPU"  # noqa: E501


def _clm(compile_loss: bool, steps: int):
    import numpy as np
    from transformers import LlamaForCausalLM

    from tokstudy.models import clm
    from tokstudy.models.config import ClmConfig

    config = ClmConfig(
        preset="base", context=1024, batch_size=32, device="cuda", compile=compile_loss
    )

    class Tokenizer:  # what llama_config reads of a tokenizer
        cls_token_id, sep_token_id, pad_token_id = 1, 2, 0

        def __len__(self) -> int:
            return 32000

    model_config = clm.llama_config(Tokenizer(), config)
    stream = np.random.default_rng(0).integers(0, 32000, 2_000_000)
    task = clm.ClmTask(clm.StreamBatches(stream, config), stream[:2048], config, "cuda")
    model = LlamaForCausalLM(model_config)
    return model, task, clm.train_flops_per_token(model_config, 1024), config


def _mlm(steps: int):
    from transformers import BertForMaskedLM

    from tokstudy.models.config import PretrainConfig
    from tokstudy.models.pretrain import MlmTask, bert_config, bert_flops_per_token, bert_mlm_loss

    config = PretrainConfig(preset="base", max_length=512, batch_size=32, device="cuda")

    class Tokenizer:
        pad_token_id = 0

        def __len__(self) -> int:
            return 32000

    model_config = bert_config(Tokenizer(), config)
    generator = torch.Generator().manual_seed(0)

    def batches(step: int) -> dict[str, torch.Tensor]:
        ids = torch.randint(5, 32000, (32, 512), generator=generator)
        labels = torch.where(torch.rand(ids.shape, generator=generator) < 0.15, ids, -100)
        return {"input_ids": ids, "labels": labels}

    task = MlmTask(batches, bert_mlm_loss)
    return BertForMaskedLM(model_config), task, bert_flops_per_token(model_config, config)


def _time(name: str, model, task, flops_per_token: float, compile_loss: bool, steps: int):
    from tokstudy.models.config import PretrainConfig
    from tokstudy.models.pretrain import build_optimizer
    from tokstudy.training.loop import LoopSettings, train

    device = torch.device("cuda")
    model.to(device)
    optimizer, scheduler = build_optimizer(model, PretrainConfig(), steps, 1, fused=True)
    settings = LoopSettings(
        steps=steps,
        log_every=steps // 2,
        checkpoint_every=steps + 1,
        grad_clip=1.0,
        compile=compile_loss,
        flops_per_token=flops_per_token,
    )
    with tempfile.TemporaryDirectory() as folder:
        train(
            model,
            optimizer,
            scheduler,
            task,
            settings,
            Path(folder),
            device=device,
            run_fingerprint="gpu_check",
        )
        import pandas as pd

        last = pd.read_csv(Path(folder) / "train_log.csv").iloc[-1]  # warm: the second half
    mode = "compiled loss" if compile_loss else "eager"
    print(
        f"| {name} | {mode} | {last['tokens_per_s'] / 1e3:.0f} k | "
        f"{last['flops_per_s'] / 1e12:.0f} | {100 * float(last['mfu'] or 0):.1f} % |"
    )


def main() -> int:
    """Print the MFU table; 2 without a CUDA GPU."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="training steps per row")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print(NO_GPU, file=sys.stderr)
        return 2
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| model | mode | tokens/s | TFLOP/s | MFU (bf16 dense) |\n|---|---|---:|---:|---:|")
    for compile_loss in (False, True):
        model, task, flops, _ = _clm(compile_loss, args.steps)
        _time("clm base, 1024 x 32", model, task, flops, compile_loss, args.steps)
        model, task, flops = _mlm(args.steps)
        _time("BERT-base MLM, 512 x 32", model, task, flops, compile_loss, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
