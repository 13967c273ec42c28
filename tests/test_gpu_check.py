"""scripts/gpu_check.py on a machine without a CUDA GPU: one line, status 2."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def test_without_a_gpu_the_check_says_so_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "gpu_check: no CUDA GPU visible (torch.cuda.is_available() is false); "
        "run it on a machine with one NVIDIA GPU"
    ]
