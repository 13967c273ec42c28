"""Where models run: device choice, GPU-absent policy and mixed precision."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import platform
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from tokstudy.errors import TokstudyError

log = logging.getLogger(__name__)


def resolve_device(requested: str, on_missing_gpu: str = "fallback") -> torch.device:
    """The device to use: ``auto`` (CUDA if present), ``cpu`` or ``cuda``.

    When ``cuda`` is requested but absent, ``on_missing_gpu`` is ``fallback`` (CPU and a
    warning) or ``error`` (a :class:`TokstudyError`).
    """
    has_cuda = torch.cuda.is_available()
    if requested == "cpu" or (requested == "auto" and not has_cuda):
        return torch.device("cpu")
    if has_cuda:
        return torch.device("cuda")
    if on_missing_gpu == "error":
        raise TokstudyError(
            "models: device 'cuda' requested but no CUDA GPU is available "
            "(set on_missing_gpu: fallback to train on CPU)"
        )
    log.warning("device 'cuda' requested but no CUDA GPU is available; using the CPU")
    return torch.device("cpu")


@contextlib.contextmanager
def autocast(device: torch.device, bf16: bool) -> Iterator[None]:
    """bf16 autocast on CUDA when ``bf16`` is set; full precision otherwise."""
    if device.type == "cuda" and bf16:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            yield
    else:
        yield


#: dense peak FLOP/s of known accelerators: (bf16 tensor cores, TF32 tensor cores), from the
#: vendors' data sheets (without sparsity); the longest matching name wins
PEAK_FLOPS: dict[str, tuple[float, float]] = {
    "H200": (989e12, 494e12),
    "H100 PCIe": (756e12, 378e12),
    "H100 NVL": (835e12, 418e12),
    "H100": (989e12, 494e12),
    "A100": (312e12, 156e12),
    "A10G": (70e12, 35e12),
    "A10": (125e12, 62.5e12),
    "L40S": (362e12, 183e12),
    "L4": (121e12, 60e12),
    "RTX 4090": (165e12, 82.6e12),
}


def peak_for_name(name: str, bf16: bool) -> float | None:
    """The dense bf16 (or TF32 when ``bf16`` is off) peak FLOP/s of the accelerator named
    ``name`` (e.g. ``torch.cuda.get_device_name()``); ``None`` when it is not in
    :data:`PEAK_FLOPS`."""
    matches = [key for key in PEAK_FLOPS if key.lower() in name.lower()]
    if not matches:
        return None
    return PEAK_FLOPS[max(matches, key=len)][0 if bf16 else 1]


def peak_flops(device: torch.device, bf16: bool) -> float | None:
    """The device's dense peak FLOP/s for MFU: from :data:`PEAK_FLOPS` on CUDA; on a GPU
    not in the table, the measured rate of a large matrix product (a warning says so);
    ``None`` (MFU not reported) on the CPU."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    peak = peak_for_name(name, bf16)
    if peak is None:
        peak = matmul_flops(device, torch.bfloat16 if bf16 else torch.float32)
        log.warning(
            "%s is not in the table of peak FLOP/s: MFU is against a measured %s matrix "
            "product, %.0f TFLOP/s",
            name,
            "bf16" if bf16 else "fp32",
            peak / 1e12,
        )
    return peak


@functools.cache
def matmul_flops(
    device: torch.device, dtype: torch.dtype, size: int = 8192, repeats: int = 10
) -> float:
    """FLOP/s of ``size``³ matrix products on ``device`` (``2·size³`` FLOPs each; the mean
    of ``repeats`` after three warm-ups)."""
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    _synchronize(device)
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    _synchronize(device)
    return 2 * size**3 * repeats / (time.perf_counter() - started)


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


#: the C++ compilers torch.compile's CPU backend can use
CPU_COMPILERS = ("g++", "c++", "clang++")


def check_compile(device: torch.device, key: str) -> None:
    """A one-line error naming the config ``key`` when ``torch.compile`` cannot run on
    ``device``: no dynamo on this platform, no C++ compiler (CPU), no Triton (CUDA)."""
    if not torch._dynamo.is_dynamo_supported():
        raise TokstudyError(f"{key}: torch.compile is not supported by this torch/Python")
    if device.type == "cpu":
        compilers = [os.environ["CXX"]] if os.environ.get("CXX") else list(CPU_COMPILERS)
        if not any(shutil.which(name) for name in compilers):
            raise TokstudyError(
                f"{key}: torch.compile on the CPU needs a C++ compiler; none of "
                f"{', '.join(compilers)} is on PATH (set {key}: false)"
            )
    elif importlib.util.find_spec("triton") is None:
        raise TokstudyError(f"{key}: torch.compile on CUDA needs Triton, which is not installed")


def resolve_compile(
    requested: bool | None, device: torch.device, key: str, on_cuda: bool = True
) -> bool:
    """Whether the loop compiles the loss: ``requested`` when set (``true`` is checked by
    :func:`check_compile`), otherwise ``on_cuda`` on CUDA when torch can compile there
    (the task's measured choice: docs/gpu.md) and never on the CPU."""
    if requested is not None:
        if requested:
            check_compile(device, key)
        return requested
    if device.type != "cuda" or not on_cuda:
        return False
    try:
        check_compile(device, key)
    except TokstudyError as error:
        log.warning("%s; training eagerly (the default compiles on CUDA)", error)
        return False
    return True


def prepare_device(device: torch.device, variable_shapes: bool = False) -> None:
    """Settings that make CUDA fast and change nothing on the CPU: TF32 for fp32 matmuls
    and convolutions; with ``variable_shapes`` (batches whose shape changes every step,
    as NMT's), no cuDNN attention, which plans each new shape on the host: NMT base eager
    took 754 ms a step with it and 44 ms without (H200, docs/gpu.md)."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        if variable_shapes:
            torch.backends.cuda.enable_cudnn_sdp(False)


def describe(device: torch.device) -> str:
    """One line naming the hardware behind ``device``."""
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    return f"CPU {_cpu_name()}, {torch.get_num_threads()} torch threads"


def _cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()
