"""The GPU check of issue 36: the study's three model kinds on one CUDA GPU, then a small
GPU study through Snakemake.

1. Speed: each kind (clm ``base`` at context 1024 × 32, BERT-base MLM 512 × 32, NMT
   ``base`` with 8192-token batches; vocabularies of 32000) trains for ``--steps`` steps
   through the project's own loop (:func:`tokstudy.training.loop.train`) on random
   tokens, with the loop's default on CUDA (the loss compiled where it measured faster)
   and, where that default compiles, eager; a table row gives tokens/s, FLOP/s and MFU
   (the share of the GPU's dense bf16 peak) of the second half of the steps.
   ``--compile-all`` adds a compiled row for the kinds whose default is eager: the
   evidence for changing that default; ``--variants`` adds rows for settings that may
   reach the MFU targets (:data:`VARIANTS`). ``--kinds`` picks kinds (``clm,mlm,nmt``).
   The GPU's own large bf16 matrix product is measured too.
2. ``--study``: ``config/gpu_check.yaml`` (clm, BERT-base MLM + POS, NMT base, one job on
   the GPU at a time) through ``snakemake`` with the data under ``--shared``; prints its
   wall time and each training job's tokens/s and MFU.

Needs torch, transformers and tokenizers; the study also needs Snakemake and the
project's other dependencies, which the check names with the ``pip download`` command
that brings them as wheels to a machine without network. Without a CUDA GPU it prints one
line and exits with status 2. ``--smoke`` runs both parts at toy sizes on the CPU (for
the project's tests).

    python scripts/gpu_check.py [--steps 30] [--study] [--shared ../shared] [--cores 16]
                                [--compile-all] [--variants] [--kinds clm,mlm,nmt]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

NO_GPU = "gpu_check: no CUDA GPU visible (torch.cuda.is_available() is false); run it on a machine with one NVIDIA GPU"  # noqa: E501
#: what the study needs beyond torch, transformers and tokenizers (import name: package)
STUDY_PACKAGES = {
    "snakemake": "snakemake",
    "jsonschema": "jsonschema",
    "conllu": "conllu",
    "babel": "babel",
    "morfessor": "morfessor",
    "sacrebleu": "sacrebleu",
    "statsmodels": "statsmodels",
}
WHEELS_ADVICE = (
    "on a machine with network and the same Python, download them as wheels and copy the "
    "folder over: python -m pip download --only-binary=:all: --python-version {py} "
    "--platform manylinux2014_x86_64 --platform any -d wheels {packages} (pure-Python "
    "packages published only as source: pip wheel --no-deps -w wheels NAME); there: "
    "python -m pip install --no-index --find-links wheels {packages}"
)
VOCAB = 32000


@dataclass(frozen=True)
class Sizes:
    """The shapes of the speed rows: the check's GPU sizes, or toy ones for ``--smoke``."""

    clm_preset: str
    context: int
    clm_batch: int
    bert_preset: str
    bert_length: int
    bert_batch: int
    nmt_preset: str
    nmt_tokens: int
    nmt_length: int
    vocab: int
    device: str
    #: ``models.pretrain.attention_dropout`` (None: BERT's, the hidden dropout)
    bert_attention_dropout: float | None = None
    #: ``nmt.train.pad_to_multiple``
    nmt_pad_to_multiple: int = 1
    #: ``nmt.train.cuda_graphs``
    nmt_cuda_graphs: bool = False


GPU_SIZES = Sizes("base", 1024, 32, "base", 512, 32, "base", 8192, 256, VOCAB, "cuda")
SMOKE_SIZES = Sizes("tiny", 64, 4, "tiny", 32, 4, "tiny", 512, 32, 500, "cpu")


class Vocabulary:
    """What the model builders read of a tokenizer: its size and special ids (for models
    trained on random tokens: this check, the benchmarks, the tests)."""

    pad_token_id, cls_token_id, sep_token_id = 0, 1, 2

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def linear_optimization(model: torch.nn.Module, config: Any, steps: int):
    """The optimizer of the clm and MLM rows: the shared one, one warm-up step, then the
    linear decay over ``steps``, on the model's device."""
    from tokstudy.training.optimizer import build_optimizer

    device = next(model.parameters()).device
    return build_optimizer(
        model, config.lr, config.weight_decay, steps=steps, warmup_steps=1, device=device
    )


def clm_kind(sizes: Sizes, compile_loss: bool | None, steps: int):
    """The clm row: a Llama decoder on a random token stream."""
    import numpy as np
    from transformers import LlamaForCausalLM

    from tokstudy.models.clm.model import llama_config, train_flops_per_token
    from tokstudy.models.clm.stream import LineStream
    from tokstudy.models.clm.train import ClmTask, StreamBatches
    from tokstudy.models.config import ClmConfig

    config = ClmConfig(
        preset=sizes.clm_preset,
        context=sizes.context,
        batch_size=sizes.clm_batch,
        device=sizes.device,
        compile=compile_loss,
    )
    model_config = llama_config(Vocabulary(sizes.vocab), config)
    ids = np.random.default_rng(0).integers(0, sizes.vocab - 1, 2_000_000)
    # lines of 100 random tokens, each followed by the last id as its end-of-line token
    offsets = np.arange(0, len(ids) + 1, 100)
    stream = LineStream(ids, offsets, eol_id=sizes.vocab - 1)
    task = ClmTask(StreamBatches(stream, config), ids[:2048], config, sizes.device)
    model = LlamaForCausalLM(model_config).to(sizes.device)
    optimization = linear_optimization(model, config, steps)
    label = f"clm {sizes.clm_preset}, {sizes.context} x {sizes.clm_batch}"
    return label, model, task, optimization, train_flops_per_token(model_config, sizes.context)


def mlm_kind(sizes: Sizes, compile_loss: bool | None, steps: int):
    """The MLM row: BERT with 15 % of random tokens masked."""
    from transformers import BertForMaskedLM

    from tokstudy.models.config import PretrainConfig
    from tokstudy.models.pretrain import (
        MlmTask,
        bert_config,
        bert_flops_per_token,
        bert_mlm_loss,
    )

    config = PretrainConfig(
        preset=sizes.bert_preset,
        max_length=sizes.bert_length,
        batch_size=sizes.bert_batch,
        device=sizes.device,
        compile=compile_loss,
        attention_dropout=sizes.bert_attention_dropout,
    )
    model_config = bert_config(Vocabulary(sizes.vocab), config)
    generator = torch.Generator().manual_seed(0)
    shape = (sizes.bert_batch, sizes.bert_length)

    def batches(step: int) -> dict[str, torch.Tensor]:
        ids = torch.randint(5, sizes.vocab, shape, generator=generator)
        labels = torch.where(torch.rand(shape, generator=generator) < 0.15, ids, -100)
        return {"input_ids": ids, "labels": labels}

    model = BertForMaskedLM(model_config).to(sizes.device)
    optimization = linear_optimization(model, config, steps)
    label = f"BERT {sizes.bert_preset} MLM, {sizes.bert_length} x {sizes.bert_batch}"
    if sizes.bert_attention_dropout is not None:
        label += f", attention dropout {sizes.bert_attention_dropout:g}"
    flops = bert_flops_per_token(model_config, config)
    return label, model, MlmTask(batches, bert_mlm_loss), optimization, flops


def nmt_kind(sizes: Sizes, compile_loss: bool | None, steps: int):
    """The NMT row: a Marian Transformer on random sentence pairs of 8 to ``nmt_length``
    tokens, in token-budget batches."""
    import numpy as np

    from tokstudy.nmt.batching import EncodedPair, SpecialIds
    from tokstudy.nmt.config import TrainConfig
    from tokstudy.nmt.model import build_model
    from tokstudy.nmt.train import NmtTask, nmt_optimization

    config = TrainConfig(
        preset=sizes.nmt_preset,
        max_tokens=sizes.nmt_tokens,
        max_length=sizes.nmt_length,
        warmup_steps=1,
        device=sizes.device,
        compile=compile_loss,
        pad_to_multiple=sizes.nmt_pad_to_multiple,
        cuda_graphs=sizes.nmt_cuda_graphs,
    )
    special = SpecialIds(pad=0, bos=1, eos=2, suppressed=(0, 1))
    rng = np.random.default_rng(0)
    examples = []
    for index in range(20_000):
        length = int(rng.integers(8, sizes.nmt_length - 1))
        source = [*rng.integers(5, sizes.vocab, length).tolist(), special.eos]
        target = rng.integers(5, sizes.vocab, length).tolist()
        examples.append(EncodedPair(index, source, target))
    model = build_model(
        sizes.nmt_preset, sizes.vocab, sizes.vocab, special, joint=False, dropout=0.1
    ).to(sizes.device)
    task = NmtTask(
        examples,
        special,
        config,
        model.config,
        evaluate=lambda model: {"chrf": 0.0, "bleu": 0.0},
        save=lambda model: None,
    )
    optimization = nmt_optimization(model, config, torch.device(sizes.device))
    label = f"NMT {sizes.nmt_preset}, {sizes.nmt_tokens}-token batches"
    if sizes.nmt_pad_to_multiple > 1:
        label += f", padded to x{sizes.nmt_pad_to_multiple}"
    if sizes.nmt_cuda_graphs:
        label += ", fixed shapes (CUDA graphs)"
    # the task counts each batch's FLOPs at its lengths (NmtTask.flops): none per token
    return label, model, task, optimization, 0.0


KINDS: tuple[Callable[..., Any], ...] = (clm_kind, mlm_kind, nmt_kind)
#: ``--kinds`` names
KIND_NAMES = {"clm": clm_kind, "mlm": mlm_kind, "nmt": nmt_kind}


class Variant(NamedTuple):
    """A candidate setting for a kind's MFU target (``--variants``)."""

    #: the kind (a ``--kinds`` name)
    kind: str
    #: the change to the table's sizes
    change: Callable[[Sizes], Sizes]
    #: compile the loss (None: the loop's default)
    compile_loss: bool | None
    #: the fewest steps its row trains: rows that record CUDA graphs reach their steady
    #: state only once every shape has been seen, recorded and replayed
    min_steps: int = 0


def _replace(**changes: Any) -> Callable[[Sizes], Sizes]:
    """The change that sets each field to its value, or to ``value(sizes)`` for a function."""
    return lambda sizes: dataclasses.replace(
        sizes,
        **{field: value(sizes) if callable(value) else value for field, value in changes.items()},
    )


#: ``--variants``, in the order of their rows (``gpu_profile.py --variants`` numbers them
#: from 1): twice the rows, fused attention under compile (BERT's attention dropout at
#: 0), NMT's lengths padded to a multiple of 8 (few shapes for compiled kernels), four
#: times NMT's token budget, eager and compiled, and NMT's batches in 8 fixed shapes
#: (widths of 32 to 256) replayed as CUDA graphs, for 100 steps at least
VARIANTS: tuple[Variant, ...] = (
    Variant("clm", _replace(clm_batch=lambda s: 2 * s.clm_batch), None),
    Variant("mlm", _replace(bert_attention_dropout=0.0), True),
    Variant("mlm", _replace(bert_batch=lambda s: 2 * s.bert_batch), None),
    Variant(
        "mlm", _replace(bert_batch=lambda s: 2 * s.bert_batch, bert_attention_dropout=0.0), True
    ),
    Variant("nmt", _replace(nmt_pad_to_multiple=8), False),
    Variant("nmt", _replace(nmt_pad_to_multiple=8), True),
    Variant("nmt", _replace(nmt_tokens=lambda s: 4 * s.nmt_tokens), False),
    Variant("nmt", _replace(nmt_tokens=lambda s: 4 * s.nmt_tokens), True),
    Variant(
        "nmt",
        _replace(nmt_pad_to_multiple=lambda s: s.nmt_length // 8, nmt_cuda_graphs=True),
        True,
        min_steps=100,
    ),
)


def train_kind(
    kind: Callable[..., Any],
    sizes: Sizes,
    compile_loss: bool | None,
    steps: int,
    *,
    log_every: int,
    on_step: Callable[[int], None] | None = None,
) -> tuple[str, Any, Any]:
    """Train one kind for ``steps`` steps through the project's loop in a scratch folder,
    compiling afresh as a workflow job does (an earlier row's graph would make torch
    recompile this row's shapes as dynamic ones); its label, the loop's result and its log
    (``train_log.csv``)."""
    import pandas as pd

    from tokstudy.training.loop import LoopSettings, train

    torch._dynamo.reset()
    torch.manual_seed(0)
    label, model, task, optimization, flops = kind(sizes, compile_loss, steps)
    with tempfile.TemporaryDirectory() as folder:
        settings = LoopSettings(
            steps=steps,
            log_every=log_every,
            checkpoint_every=steps + 1,
            grad_clip=1.0,
            out_dir=Path(folder),
            run_fingerprint="gpu_check",
            compile=compile_loss,
            flops_per_token=flops,
        )
        device = torch.device(sizes.device)
        result = train(model, optimization, task, settings, device=device, on_step=on_step)
        return label, result, pd.read_csv(Path(folder) / "train_log.csv")


def speed_row(
    kind: Callable[..., Any], sizes: Sizes, compile_loss: bool | None, steps: int, note: str = ""
) -> tuple[str, bool]:
    """Train one kind for ``steps`` steps; its table row from the log of the last step (its
    mode followed by ``note``), and whether the loss was compiled."""
    import pandas as pd

    label, result, log = train_kind(kind, sizes, compile_loss, steps, log_every=max(1, steps // 2))
    last = log.iloc[-1]  # warm: the second half
    compiled = "loss compiled" if result.extra["compiled"] else "eager"
    mode = {False: "eager", None: f"default: {compiled}", True: "loss compiled"}[compile_loss]
    mode += f", {note}" if note else ""
    mfu = "" if pd.isna(last["mfu"]) else f"{100 * float(last['mfu']):.1f} %"
    row = (
        f"| {label} | {mode} | {1000 * result.train_seconds / steps:.0f} | "
        f"{last['tokens_per_s'] / 1e3:.1f} k | {last['flops_per_s'] / 1e12:.1f} | {mfu} |"
    )
    return row, result.extra["compiled"]


def speed_table(
    sizes: Sizes,
    steps: int,
    compile_all: bool = False,
    kinds: Sequence[Callable[..., Any]] = KINDS,
    variants: bool = False,
) -> None:
    """Print the table of issue 36: every kind with the loop's default, then eager where
    the default compiles (or failed); with ``compile_all``, compiled where the default is
    eager; with ``variants``, the default a second time (the run-to-run spread a variant
    must beat) and the :data:`VARIANTS` of those kinds."""
    from tokstudy.training.device import matmul_flops

    device = torch.device(sizes.device)
    if device.type == "cuda":
        size = 8192
        print(
            f"{torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA "
            f"{torch.version.cuda}; {size}^3 bf16 matrix product: "
            f"{matmul_flops(device, torch.bfloat16, size) / 1e12:.0f} TFLOP/s",
            flush=True,
        )
    print(
        "| model | mode | ms / step (all steps) | tokens/s | TFLOP/s | MFU (bf16 dense) |\n"
        "|---|---|---:|---:|---:|---:|",
        flush=True,
    )
    for kind in kinds:
        compiled = _print_row(kind, sizes, None, steps)
        if variants:
            _print_row(kind, sizes, None, steps, "second run")
        if compiled is not False:  # compiled, or failed: eager is the baseline to compare
            _print_row(kind, sizes, False, steps)
        elif compile_all:
            _print_row(kind, sizes, True, steps)
    chosen = [variant for variant in VARIANTS if KIND_NAMES[variant.kind] in kinds]
    if variants and chosen:
        print("| *variants (`--variants`)* | | | | | |", flush=True)
        for variant in chosen:
            longer = f"{variant.min_steps} steps" if variant.min_steps > steps else ""
            _print_row(
                KIND_NAMES[variant.kind],
                variant.change(sizes),
                variant.compile_loss,
                max(steps, variant.min_steps),
                longer,
            )


def _print_row(
    kind: Callable[..., Any], sizes: Sizes, compile_loss: bool | None, steps: int, note: str = ""
) -> bool | None:
    """Print one row of the speed table; whether the loss was compiled (None if the row
    failed: one failing row must not hide the others)."""
    try:
        row, compiled = speed_row(kind, sizes, compile_loss, steps, note)
    except Exception as error:
        traceback.print_exc()
        print(f"| {kind.__name__} | compile={compile_loss} | failed: {error!r} |", flush=True)
        compiled = None
    else:
        print(row, flush=True)
    if sizes.device == "cuda":
        torch.cuda.empty_cache()
    return compiled


def missing_packages() -> list[str]:
    """The study's packages that are not importable here."""
    return sorted(
        package
        for module, package in STUDY_PACKAGES.items()
        if importlib.util.find_spec(module) is None
    )


def study_config(shared: Path, results: Path, smoke: bool) -> dict[str, Any]:
    """``config/gpu_check.yaml`` with its ``../shared`` paths under ``shared`` and
    ``results`` as results folder; for ``--smoke``, toy models on the CPU."""
    import yaml

    text = (REPO / "config" / "gpu_check.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text.replace("../shared", str(shared.resolve())))
    config["results_dir"] = str(results)
    if smoke:
        models, nmt = config["models"], config["nmt"]
        models["clm"].update(preset="tiny", context=64, batch_size=4, epochs=0.05)
        models["pretrain"].update(preset="tiny", steps=4, batch_size=4, max_length=32)
        models["finetune"].update(max_length=32)
        models["evaluation"].update(max_lines=20)
        nmt["train"].update(preset="tiny", max_steps=4, max_tokens=512, eval_every=2)
        nmt["decode"].update(beam_size=1)
        nmt["split"].update(dev_size=10, test_size=10)
        for section in (
            *(models[key] for key in models if isinstance(models[key], dict)),
            nmt["train"],
            nmt["decode"],
        ):
            if "device" in section:
                section["device"] = "cpu"
        config["resources"] = {}
    return config


def write_study_config(shared: Path, results: Path, smoke: bool) -> Path:
    """The study's config file, inside its results folder, marked as one first: a file
    beside it would make ``results/`` no results folder for the other studies."""
    import yaml

    from tokstudy.workflow.results_dir import mark_results_dir

    mark_results_dir(str(results))
    config_file = results / "gpu_check.yaml"
    config_file.write_text(yaml.safe_dump(study_config(shared, results, smoke)))
    return config_file


def run_study(shared: Path, cores: int, smoke: bool) -> int:
    """Run the small GPU study through Snakemake; print its wall time and job speeds."""
    missing = missing_packages()
    if missing:
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        print(
            f"gpu_check: the study needs {', '.join(missing)}, not installed here; "
            + WHEELS_ADVICE.format(py=python, packages=" ".join(missing)),
            file=sys.stderr,
        )
        return 3
    results = REPO / "results" / time.strftime("gpu_check_%Y%m%d_%H%M%S")
    config_file = write_study_config(shared, results, smoke)
    command = [
        sys.executable, "-m", "snakemake", "--cores", str(cores), "--resources", "gpu=1",
        "--configfile", str(config_file), "--quiet", "progress",
    ]  # fmt: skip
    print(f"\n$ {' '.join(command)}", flush=True)
    started = time.perf_counter()
    paths = [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    status = subprocess.run(command, cwd=REPO, env=environment, check=False).returncode
    seconds = time.perf_counter() - started
    print(f"study: exit {status}, wall time {seconds / 60:.1f} min ({seconds:.0f} s)")
    print(job_table(results))
    if status == 0 and not smoke:
        shutil.rmtree(results / "checkpoints", ignore_errors=True)
    return status


def job_table(results: Path) -> str:
    """One row per finished training job: tokens/s and MFU over the whole run (the
    compilation and evaluations included) and the median of its log rows after the first
    (the steady state), and whether the loss was compiled."""
    import pandas as pd

    rows = [
        "| job | tokens/s (run) | MFU (run) | tokens/s (steady) | MFU (steady) | compiled |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for summary in sorted([*results.rglob("train.json"), *results.rglob("pretrain.json")]):
        data = json.loads(summary.read_text(encoding="utf-8"))
        steady = pd.read_csv(summary.parent / "train_log.csv").iloc[1:]
        figures = [
            data.get("tokens_per_s"),
            data.get("mfu"),
            steady["tokens_per_s"].median() if len(steady) else None,
            pd.to_numeric(steady["mfu"]).median() if len(steady) else None,
        ]
        cells = [
            ""
            if value is None or pd.isna(value)
            else f"{value / 1e3:.1f} k"
            if i % 2 == 0
            else f"{100 * value:.1f} %"
            for i, value in enumerate(figures)
        ]
        where = summary.parent.relative_to(results)
        rows.append(f"| {where} | {' | '.join(cells)} | {data.get('compiled', '')} |")
    return "\n".join(rows)


def kind_names(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """The model kinds of a ``--kinds`` value (comma-separated); one line naming the
    unknown ones, status 2 (``parser.error``)."""
    names = text.split(",")
    unknown = sorted(set(names) - set(KIND_NAMES))
    if unknown:
        parser.error(f"--kinds: unknown {', '.join(unknown)} (known: {', '.join(KIND_NAMES)})")
    return names


def main() -> int:
    """Print the speed table, then (``--study``) run the GPU study; 2 without a CUDA GPU."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="training steps per row")
    parser.add_argument("--study", action="store_true", help="run the GPU study too")
    shared = Path(os.environ.get("TOKSTUDY_SHARED", REPO.parent / "shared"))
    parser.add_argument("--shared", type=Path, default=shared, help="corpora/ and ud/ are here")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--smoke", action="store_true", help="toy sizes on the CPU (tests)")
    parser.add_argument(
        "--compile-all",
        action="store_true",
        help="also a compiled row for the kinds whose default is eager",
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="also the candidate settings for the MFU targets (VARIANTS), of the chosen kinds",
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KIND_NAMES),
        help=f"the speed table's model kinds, comma-separated (of {', '.join(KIND_NAMES)})",
    )
    args = parser.parse_args()
    names = kind_names(parser, args.kinds)
    if not args.smoke and not torch.cuda.is_available():
        print(NO_GPU, file=sys.stderr)
        return 2
    started = time.perf_counter()
    sizes = SMOKE_SIZES if args.smoke else GPU_SIZES
    kinds = [KIND_NAMES[name] for name in names]
    speed_table(sizes, args.steps, args.compile_all, kinds, args.variants)
    status = run_study(args.shared, args.cores, args.smoke) if args.study else 0
    print(f"gpu_check: {(time.perf_counter() - started) / 60:.1f} min in all")
    return status


if __name__ == "__main__":
    sys.exit(main())
