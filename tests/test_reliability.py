"""Faults and bad input end to end: each gives one clear line, none a silent wrong result."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REPO


def _failure_lines(stderr: str) -> list[str]:
    """What a step printed besides its progress (INFO) records."""
    return [line for line in stderr.splitlines() if " INFO " not in line]


def _run_step(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``run_step`` in a fresh interpreter as a Snakemake script does; (result, log)."""
    script = tmp_path / "step.py"
    log = tmp_path / "step.log"
    script.write_text(
        "from pathlib import Path\n"
        "from tokstudy.workflow_step import run_step\n"
        f"LOG = {str(log)!r}\n" + textwrap.dedent(body),
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=REPO, check=False
    )
    return result, log.read_text(encoding="utf-8")


def test_an_unwritable_output_is_one_line_and_logged(tmp_path: Path) -> None:
    (tmp_path / "raw.txt").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "blocker").write_text("a file, not a folder", encoding="utf-8")
    out = tmp_path / "blocker" / "train.txt"
    result, log = _run_step(
        tmp_path,
        f"""
        from tokstudy.corpora import prepare_corpus
        run_step(LOG, prepare_corpus, [Path({str(tmp_path / "raw.txt")!r})], Path({str(out)!r}),
                 Path({str(tmp_path / "h.txt")!r}), Path({str(tmp_path / "s.json")!r}),
                 label="xx", heldout=1, seed=1)
        """,
    )
    assert result.returncode == 1
    assert _failure_lines(result.stderr) == [
        f"error: NotADirectoryError: [Errno 20] Not a directory: '{out}'"
    ]
    assert f"prepare_corpus failed: NotADirectoryError: [Errno 20] Not a directory: '{out}'" in log
    assert "Traceback (most recent call last)" in log


def test_a_tokstudy_error_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    result, log = _run_step(
        tmp_path,
        """
        from tokstudy.corpora import prepare_corpus
        run_step(LOG, prepare_corpus, [Path("no/such.txt")], Path("t"), Path("h"), Path("s"),
                 label="xx", heldout=1, seed=1)
        """,
    )
    line = "error: corpus of language 'xx': file not found: no/such.txt"
    assert result.returncode == 1 and _failure_lines(result.stderr) == [line]
    assert "file not found: no/such.txt" in log and "Traceback" not in log
