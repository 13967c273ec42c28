"""The code base stays ruff-clean (the standard every module is reviewed against)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_ruff_reports_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "src", "tests", "scripts", "workflow"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
