"""The test suite's own contract: a missing ``../shared`` is visible, and fatal where required."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

SHARED_TEST = "tests/test_study.py::test_a_ud_treebank_is_a_corpus_source"


def run_pytest(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """Run one ``shared`` test in a subprocess with ``../shared`` pointed at a missing folder."""
    environment = {**os.environ, "TOKSTUDY_SHARED": str(tmp_path / "absent"), **env}
    environment.pop(
        "TOKSTUDY_REQUIRE_SHARED", None
    ) if "TOKSTUDY_REQUIRE_SHARED" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", SHARED_TEST],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_missing_shared_skips_with_a_visible_reason(tmp_path) -> None:
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "1 skipped" in result.stdout
    assert "needs the reference data folder" in result.stdout and "absent" in result.stdout


def test_missing_shared_fails_when_required(tmp_path) -> None:
    result = run_pytest(tmp_path, TOKSTUDY_REQUIRE_SHARED="1")
    assert result.returncode == 1
    assert "1 error" in result.stdout  # a failure in setup: the test never ran
    assert "TOKSTUDY_REQUIRE_SHARED=1 requires it" in result.stdout


@pytest.mark.parametrize("marker", ["slow", "shared"])
def test_markers_are_registered(marker: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--markers"], cwd=REPO, capture_output=True, text=True
    )
    assert f"@pytest.mark.{marker}:" in result.stdout
