"""Benchmark: masked-LM pretraining throughput, and the memmap loader vs. on-the-fly tokenizing.

Prints, with the hardware description:

* loader alone: tokens/s of batches drawn from the pre-tokenized memmap corpus vs. batches
  tokenized on the fly from the text lines (same tokenizer, masking included), and the ratio;
* training: tokens/s of the full loop (forward, backward, AdamW) for ``tiny`` and ``small`` on
  the CPU (``tiny`` also with the on-the-fly loader), and ``base`` on CUDA when a GPU is
  present, with model FLOPs utilisation = 6 · N · tokens/s / peak (N = parameters without
  the embeddings; attention FLOPs left out).

Usage: python scripts/bench_train.py [--text FILE] [--tokenizer DIR] [--steps N] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from transformers import BertForMaskedLM

from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models.config import PretrainConfig
from tokstudy.models.data import pretokenize, with_cls_sep
from tokstudy.models.family import load_transformers_tokenizer
from tokstudy.models.fast_transformers_tokenizer import train_wordpiece
from tokstudy.models.masking import Masker
from tokstudy.models.pretrain import BertBatches, bert_config, bert_mlm_loss, train_loop
from tokstudy.training.device import describe

DEFAULT_TEXT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "hft2022" / "en.txt.gz"
#: dense bf16 peak TFLOP/s of GPUs this project may run on
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0}


class OnTheFlyBatches:
    """The baseline loader: tokenize consecutive text lines at every step, then mask."""

    def __init__(self, lines: list[str], tokenizer, config: PretrainConfig) -> None:
        self.lines = lines
        self.tokenizer = tokenizer
        self.block_len = config.max_length - 2
        self.batch_size = config.batch_size
        self.seed = config.seed
        self.masker = Masker(tokenizer, seed=config.seed)

    def __call__(self, step: int) -> dict[str, torch.Tensor]:
        rng = np.random.default_rng([self.seed, step])
        need = self.block_len * self.batch_size
        stream: list[int] = []
        start = int(rng.integers(len(self.lines)))
        while len(stream) < need:
            chunk = [self.lines[(start + i) % len(self.lines)] for i in range(16)]
            start += 16
            for ids in self.tokenizer(chunk, add_special_tokens=False)["input_ids"]:
                stream.extend(ids)
        blocks = np.asarray(stream[:need], dtype=np.int64).reshape(self.batch_size, -1)
        framed = with_cls_sep(blocks, self.tokenizer.cls_token_id, self.tokenizer.sep_token_id)
        masked, labels = self.masker(torch.from_numpy(framed), step)
        return {"input_ids": masked, "labels": labels}


def loader_rate(batches, steps: int) -> float:
    """Tokens per second of a batch source alone."""
    batches(0)
    start = time.perf_counter()
    tokens = sum(batches(step)["input_ids"].numel() for step in range(1, steps + 1))
    return tokens / (time.perf_counter() - start)


def training_rate(model, batches, config: PretrainConfig, device: torch.device) -> float:
    """Tokens per second of the training loop, the first 3 steps (warm-up) left out."""
    times: list[float] = []

    def record(step: int) -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as out:
        train_loop(
            model,
            batches,
            config,
            Path(out),
            device=device,
            run_fingerprint="bench",
            loss_fn=bert_mlm_loss,
            on_step=record,
        )
    measured = len(times) - 3
    return measured * config.batch_size * config.max_length / (times[-1] - times[2])


def non_embedding_parameters(model: BertForMaskedLM) -> int:
    """Parameters outside the embedding tables (the N of 6 · N FLOPs per token)."""
    embeddings = sum(p.numel() for p in model.bert.embeddings.parameters())
    return sum(p.numel() for p in model.parameters()) - embeddings


def peak_flops(device: torch.device, override: float | None) -> float | None:
    """Peak bf16 FLOP/s of the GPU (from the table or --peak-tflops)."""
    if override:
        return override * 1e12
    name = torch.cuda.get_device_name(device)
    return next((tf * 1e12 for key, tf in PEAK_TFLOPS.items() if key in name), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT, help="training text")
    parser.add_argument("--lines", type=int, default=5000, help="lines of text to use")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer folder (default: WordPiece)")
    parser.add_argument("--vocab-size", type=int, default=8000, help="default tokenizer's size")
    parser.add_argument("--steps", type=int, default=20, help="training steps per measurement")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--peak-tflops", type=float, help="GPU peak for MFU if not in the table")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    lines = read_nonblank_lines(args.text, args.lines)
    if args.tokenizer:
        tokenizer = load_transformers_tokenizer(args.tokenizer)
        tokenizer_name = str(args.tokenizer)
    else:
        tokenizer = train_wordpiece(lines, args.vocab_size)
        tokenizer_name = f"WordPiece {len(tokenizer)}"
    cpu = torch.device("cpu")
    print(f"hardware: {describe(cpu)}; load average {os.getloadavg()[0]:.1f}")
    print(f"text: {args.text} ({len(lines)} lines); tokenizer: {tokenizer_name}")

    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "train.txt"
        text.write_text("\n".join(lines), encoding="utf-8")
        start = time.perf_counter()
        corpus = pretokenize(tokenizer, text, Path(tmp) / "corpus")
        seconds = time.perf_counter() - start
        print(f"pre-tokenizing once: {corpus.n_tokens} tokens in {seconds:.2f} s")

        base = PretrainConfig(
            steps=args.steps,
            batch_size=args.batch_size,
            max_length=args.max_length,
            warmup_steps=2,
            log_every=args.steps,
            checkpoint_every=10**9,
            device="cpu",
        )
        memmap = BertBatches(corpus, tokenizer, base)
        on_the_fly = OnTheFlyBatches(lines, tokenizer, base)
        memmap_rate = loader_rate(memmap, 50)
        fly_rate = loader_rate(on_the_fly, 50)
        print("\nloader alone (tokens/s)      memmap    on-the-fly   ratio")
        print(
            f"  batch {args.batch_size}×{args.max_length}{'':12}"
            f"{memmap_rate:>10,.0f} {fly_rate:>12,.0f} {memmap_rate / fly_rate:>7.1f}×"
        )

        print("\ntraining (tokens/s)          device   params   memmap   on-the-fly")
        for preset in ("tiny", "small"):
            config = PretrainConfig(**{**base.__dict__, "preset": preset})
            torch.manual_seed(0)
            model = BertForMaskedLM(bert_config(tokenizer, config))
            rate = training_rate(model, BertBatches(corpus, tokenizer, config), config, cpu)
            fly = ""
            if preset == "tiny":
                torch.manual_seed(0)
                model = BertForMaskedLM(bert_config(tokenizer, config))
                fly_train = training_rate(
                    model, OnTheFlyBatches(lines, tokenizer, config), config, cpu
                )
                fly = f"{fly_train:>10,.0f} ({rate / fly_train:.2f}× memmap)"
            params = sum(p.numel() for p in model.parameters()) / 1e6
            print(f"  {preset:<26} cpu {params:>7.1f}M {rate:>8,.0f} {fly}")

        if torch.cuda.is_available():
            cuda = torch.device("cuda")
            config = PretrainConfig(
                **{**base.__dict__, "preset": "base", "device": "cuda", "batch_size": 64}
            )
            torch.manual_seed(0)
            model = BertForMaskedLM(bert_config(tokenizer, config))
            rate = training_rate(model, BertBatches(corpus, tokenizer, config), config, cuda)
            n = non_embedding_parameters(model)
            peak = peak_flops(cuda, args.peak_tflops)
            mfu = f"MFU {6 * n * rate / peak:.1%}" if peak else "MFU: peak unknown (--peak-tflops)"
            print(f"  {'base (bf16, batch 64)':<26} cuda {n / 1e6:>6.1f}M {rate:>8,.0f}  {mfu}")
            print(f"  GPU: {describe(cuda)}")
        else:
            print("  base                       no CUDA GPU here: not measured")


if __name__ == "__main__":
    main()
