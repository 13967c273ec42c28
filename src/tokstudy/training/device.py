"""Where models run: device choice, GPU-absent policy and mixed precision."""

from __future__ import annotations

import contextlib
import logging
import platform
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
