"""Benchmark: peak memory (RSS) of every stage at several corpus sizes, to show it flat.

Makes an English corpus of each size from the shipped HFT English lines (shuffled with a
seed and repeated, one plain text file, as a user's raw corpus), then runs each stage on it
in a fresh process and reads that process's peak RSS (``getrusage``): corpus preparation,
tokenizer training (SentencePiece BPE with its sampling, HF BPE, the Python-side ``bbpe``,
HFT and Morfessor), the metric pass on the held-out split, pre-tokenization of the training
split, the NMT train/dev/test split of an en/mr parallel text of the same size (the
shipped aligned pairs repeated), and a few steps of the tiny ``clm``, BERT MLM and NMT
models. Prints one table
(peak RSS in MB, seconds) and each stage's spread across the sizes.

    python scripts/bench_scale.py --scratch /work/runs/issue57 [--sizes 0.2 1 5]
        [--stages prepare train_sp_bpe …] [--nmt-max-gb 0.2] [--keep]

``--scratch``: a folder outside the repository for the corpora (each size removed after
its stages unless ``--keep``; 5 GB of text needs about 14 GB there). NMT runs up to
``--nmt-max-gb`` (its parallel text is made beside the corpus); the tokenizer
trainings run up to ``--train-max-gb``. Each stage runs on one core (``RAYON_NUM_THREADS``,
``OMP_NUM_THREADS`` and torch's threads 1); the stages after training use ``hf_bpe`` trained
on the first 20 MB of the text. One stage in one
process: ``--run-stage NAME --work FOLDER`` (what the table runs) prints its JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO.parent / "shared" / "corpora" / "hft2022"
VOCAB = 8000
#: the stages in the order they run (each in its own process)
STAGES = (
    "prepare",
    "train_sp_bpe",
    "train_hf_bpe",
    "train_bbpe",
    "train_hft",
    "train_morfessor",
    "metrics",
    "pretokenize",
    "clm",
    "mlm",
    "nmt_split",
    "nmt",
)
#: the text the later stages' tokenizer (``hf_bpe``) is trained on: a fixed sample, so
#: they measure the corpus's size, not a tokenizer trained on more text
SAMPLE_BYTES = 20_000_000
CLM_STEPS = 13
MLM_STEPS = 10
NMT_STEPS = 10


def make_corpus(path: Path, size_bytes: int, seed: int = 0) -> int:
    """A text file of at least ``size_bytes`` bytes: the shipped English lines, each pass
    over them in a new seeded order; the bytes written."""
    from tokstudy.files.lines import read_nonblank_lines

    lines = [line + "\n" for line in read_nonblank_lines(SHIPPED / "en.txt.gz")]
    written, rng = 0, random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        while written < size_bytes:
            rng.shuffle(lines)
            for line in lines:
                out.write(line)
                written += len(line.encode("utf-8"))
                if written >= size_bytes:
                    break
    return written


def make_parallel(folder: Path, size_bytes: int, seed: int = 0) -> None:
    """``train.en`` and ``train.mr``: the shipped aligned en/mr pairs repeated in seeded
    orders until both sides hold ``size_bytes`` bytes; a dev split of 200 pairs."""
    from tokstudy.files.lines import read_text_lines

    sides = [read_text_lines(SHIPPED / f"{language}.txt.gz") for language in ("en", "mr")]
    pairs = list(zip(*sides, strict=True))
    pairs = [(en.strip(), mr.strip()) for en, mr in pairs if en.strip() and mr.strip()]
    dev, pairs = pairs[:200], pairs[200:]
    for name, chosen in (("dev", dev), ("train", None)):
        written, rng = 0, random.Random(seed)
        with (
            (folder / f"{name}.en").open("w", encoding="utf-8") as en,
            (folder / f"{name}.mr").open("w", encoding="utf-8") as mr,
        ):
            while chosen is not None or written < size_bytes:
                batch = chosen if chosen is not None else rng.sample(pairs, len(pairs))
                for source, target in batch:
                    en.write(source + "\n")
                    mr.write(target + "\n")
                    written += len(source.encode()) + len(target.encode()) + 2
                    if chosen is None and written >= size_bytes:
                        break
                if chosen is not None:
                    break


# --- the stages: each runs in its own process (--run-stage) --------------------------------


def stage_prepare(work: Path) -> dict[str, Any]:
    from tokstudy.corpora.prepare import prepare_corpus

    summary = prepare_corpus(
        [work / "raw.txt"],
        work / "train.txt",
        work / "heldout.txt",
        work / "stats.json",
        label="en",
        heldout=0.1,
        seed=42,
    )
    return {"lines": summary["lines_used"], "bytes": summary["bytes_used"]}


def _train(name: str, work: Path, **params: Any) -> dict[str, Any]:
    from tokstudy.tokenizers.base import TrainSpec
    from tokstudy.tokenizers.build import train_and_save

    directory = work / f"tok_{name}"
    spec = TrainSpec(VOCAB, params, seed=42)
    tokenizer = train_and_save(name, work / "train.txt", spec, directory)
    return {"vocab": len(tokenizer.vocab), "bytes": (work / "train.txt").stat().st_size}


def stage_tokenizer(work: Path) -> None:
    """The tokenizer of the later stages: ``hf_bpe`` trained on the first
    :data:`SAMPLE_BYTES` of the text (not a measured stage)."""
    from tokstudy.tokenizers.base import TrainSpec
    from tokstudy.tokenizers.build import train_to_directory

    make_corpus(work / "sample.txt", SAMPLE_BYTES)
    train_to_directory("hf_bpe", work / "sample.txt", TrainSpec(VOCAB, seed=42), work / "tok")


def stage_metrics(work: Path) -> dict[str, Any]:
    from tokstudy.metrics.compute import compute_metrics
    from tokstudy.tokenizers.registry import load_tokenizer

    metrics, _ = compute_metrics(load_tokenizer(work / "tok"), work / "heldout.txt")
    return {"bytes": (work / "heldout.txt").stat().st_size, "tokens": metrics["tokens"]}


def stage_pretokenize(work: Path) -> dict[str, Any]:
    from tokstudy.models.data import pretokenize
    from tokstudy.models.family import load_transformers_tokenizer

    tokenizer = load_transformers_tokenizer(work / "tok")
    corpus = pretokenize(tokenizer, work / "train.txt", work / "corpus")
    return {"bytes": (work / "train.txt").stat().st_size, "tokens": corpus.n_tokens}


def stage_clm(work: Path) -> dict[str, Any]:
    from tokstudy.models.clm.model import llama_config, train_flops_per_token
    from tokstudy.models.clm.train import train_clm
    from tokstudy.models.config import ClmConfig
    from tokstudy.models.family import load_transformers_tokenizer

    config = ClmConfig(budget="flops", train_flops=1.0)
    tokenizer = load_transformers_tokenizer(work / "tok")
    per_token = train_flops_per_token(llama_config(tokenizer, config), config.context)
    flops = CLM_STEPS * per_token * config.batch_size * config.context
    config = ClmConfig(budget="flops", train_flops=flops)
    train_clm(work / "tok", work / "corpus", work / "train.txt", work / "clm", config)
    summary = json.loads((work / "clm" / "train.json").read_text())
    return {"steps": summary["steps"], "tokens": summary["train_stream_tokens"]}


def stage_mlm(work: Path) -> dict[str, Any]:
    from tokstudy.models.config import PretrainConfig
    from tokstudy.models.family import load_transformers_tokenizer
    from tokstudy.models.pretrain import pretrain_bert

    tokenizer = load_transformers_tokenizer(work / "tok")
    pretrain_bert(tokenizer, work / "corpus", work / "mlm", PretrainConfig(steps=MLM_STEPS))
    summary = json.loads((work / "mlm" / "pretrain.json").read_text())
    return {"steps": summary["steps"], "tokens": summary["training_tokens"]}


def stage_nmt_split(work: Path) -> dict[str, Any]:
    from tokstudy.nmt.config import SplitConfig
    from tokstudy.nmt.data import split_corpus

    parallel = work / "parallel"
    sources = [parallel / "train.en", parallel / "train.mr"]
    summary = split_corpus(sources, ("en", "mr"), work / "split", SplitConfig())
    return {"pairs": summary["cleaning"]["pairs_read"]}


def stage_nmt(work: Path) -> dict[str, Any]:
    from tokstudy.nmt.config import TrainConfig
    from tokstudy.nmt.data import read_split, stream_split
    from tokstudy.nmt.train import train_translation_model
    from tokstudy.tokenizers.registry import load_tokenizer

    tokenizer = load_tokenizer(work / "tok")
    train = stream_split(work / "parallel", "train", ("en", "mr"))  # as the workflow reads it
    dev = read_split(work / "parallel", "dev", ("en", "mr"))
    config = TrainConfig(max_steps=NMT_STEPS, eval_every=NMT_STEPS, warmup_steps=1)
    summary = train_translation_model(tokenizer, tokenizer, train, dev, work / "nmt", config)
    return {"pairs": summary["train_pairs"]}


STAGE_FUNCTIONS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "prepare": stage_prepare,
    "tokenizer": stage_tokenizer,
    "train_sp_bpe": lambda work: _train("sp_bpe", work),
    "train_hf_bpe": lambda work: _train("hf_bpe", work),
    "train_bbpe": lambda work: _train("bbpe", work),
    "train_hft": lambda work: _train("hft", work),
    # one epoch: its word counts are the memory; its epochs over them take minutes
    "train_morfessor": lambda work: _train("morfessor", work, max_epochs=1),
    "metrics": stage_metrics,
    "pretokenize": stage_pretokenize,
    "clm": stage_clm,
    "mlm": stage_mlm,
    "nmt_split": stage_nmt_split,
    "nmt": stage_nmt,
}


def run_stage(name: str, work: Path) -> None:
    """Run one stage in this process; print its JSON line with the peak RSS."""
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    facts = STAGE_FUNCTIONS[name](work) or {}
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = {
        "stage": name,
        "seconds": round(seconds, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "max_rss_mb": round(usage.ru_maxrss / 1024),
    }
    print(json.dumps(line | facts))


# --- the table ------------------------------------------------------------------------------


def measure(stage: str, work: Path) -> dict[str, Any]:
    """One stage in a fresh process: its JSON line, or the error's last line."""
    command = [sys.executable, __file__, "--run-stage", stage, "--work", str(work)]
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # one core
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise SystemExit(f"stage {stage} failed: {last}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  {stage}: {result}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path)
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.2, 1.0, 5.0])
    parser.add_argument("--stages", nargs="+", default=list(STAGES), choices=STAGES)
    parser.add_argument("--nmt-max-gb", type=float, default=0.2)
    parser.add_argument("--train-max-gb", type=float, default=5.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--run-stage", choices=[*STAGES, "tokenizer"])
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    if args.run_stage:
        run_stage(args.run_stage, args.work)
        return
    if args.scratch is None or args.scratch.resolve().is_relative_to(REPO):
        parser.error("--scratch: a folder outside the repository")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    table: dict[str, dict[float, dict[str, Any]]] = {stage: {} for stage in args.stages}
    for size in args.sizes:
        work = args.scratch / f"{size:g}GB"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        written = make_corpus(work / "raw.txt", int(size * 1e9))
        print(f"{size:g} GB: {written:,} bytes of text", flush=True)
        if any(stage.startswith("nmt") for stage in args.stages) and size <= args.nmt_max_gb:
            (work / "parallel").mkdir()
            make_parallel(work / "parallel", int(size * 1e9))
        measure("tokenizer", work)
        for stage in args.stages:
            if stage.startswith("nmt") and size > args.nmt_max_gb:
                continue
            if stage.startswith("train_") and size > args.train_max_gb:
                continue
            table[stage][size] = measure(stage, work)
        if not args.keep:
            shutil.rmtree(work)
    print_table(table, args.sizes)


def print_table(table: dict[str, dict[float, dict[str, Any]]], sizes: list[float]) -> None:
    """Peak RSS (MB) and seconds per stage and size, and the RSS spread across sizes."""
    head = " | ".join(f"{size:g} GB: MB, s" for size in sizes)
    print(f"\n| stage | {head} | RSS max / min |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for stage, runs in table.items():
        cells = [
            f"{run['max_rss_mb']:,}, {run['seconds']:g}" if (run := runs.get(size)) else "not run"
            for size in sizes
        ]
        rss = [run["max_rss_mb"] for run in runs.values()]
        spread = f"{max(rss) / min(rss):.2f}" if len(rss) > 1 else "–"
        print(f"| {stage} | " + " | ".join(cells) + f" | {spread} |")


if __name__ == "__main__":
    main()
