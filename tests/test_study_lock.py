"""One writer per study folder (issue 40): the lock in the results folder itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from workflow_support import copy_project, project_env

from tokstudy.errors import TokstudyError
from tokstudy.workflow import study_lock
from tokstudy.workflow.study_lock import LOCK_FILE, acquire, pid_alive, release


def _dead_pid() -> int:
    """The PID of a process that has ended (reaped, so no longer running)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _write_owner(folder: Path, **owner: object) -> None:
    (folder / LOCK_FILE).write_text(json.dumps(owner), encoding="utf-8")


def test_acquire_release_and_a_second_owner_refused(tmp_path: Path) -> None:
    lock = acquire(tmp_path)
    owner = json.loads(lock.read_text("utf-8"))
    assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
    assert acquire(tmp_path) == lock  # this process again: held already
    release(tmp_path)
    assert not lock.exists()
    _write_owner(tmp_path, host=socket.gethostname(), pid=os.getppid(), started="then")
    with pytest.raises(TokstudyError) as error:
        acquire(tmp_path)
    message = str(error.value)
    assert f"results_dir {tmp_path.resolve()} is in use" in message
    assert f"host {socket.gethostname()}, PID {os.getppid()}" in message and "\n" not in message
    release(tmp_path)  # not ours: left alone
    assert (tmp_path / LOCK_FILE).exists()


def test_a_stale_lock_of_a_dead_process_is_replaced(tmp_path: Path, capsys) -> None:
    dead = _dead_pid()
    assert not pid_alive(dead)
    _write_owner(tmp_path, host=socket.gethostname(), pid=dead)
    acquire(tmp_path)
    assert json.loads((tmp_path / LOCK_FILE).read_text("utf-8"))["pid"] == os.getpid()
    assert f"removed the stale lock of {socket.gethostname()} PID {dead}" in capsys.readouterr().err


def test_a_lock_of_another_host_is_never_taken_over(tmp_path: Path) -> None:
    _write_owner(tmp_path, host="elsewhere.invalid", pid=_dead_pid())
    with pytest.raises(TokstudyError, match=r"host elsewhere\.invalid, PID \d+"):
        acquire(tmp_path)


def test_an_unreadable_lock_is_held_not_ignored(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).write_text("{half", encoding="utf-8")
    with pytest.raises(TokstudyError, match="host \\?, PID \\?"):
        study_lock.acquire(tmp_path)


# --- two clones of the project, one results folder


def _clone_config(clone: Path, results: Path) -> Path:
    config = {
        "results_dir": str(results),
        "languages": {"en": {"chatterbot": "english"}},
        "corpus_defaults": {"heldout": 0.2},
        "vocab_sizes": [200],
        "tokenizers": {"hf_bpe": {}},
        "metrics": ["mu"],
    }
    path = clone / "tiny_lock.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _snakemake(clone: Path, results: Path, *args: str, **popen: object):
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(clone / "Snakefile"),
        "--directory",
        str(clone),
        "--configfile",
        str(_clone_config(clone, results)),
        "-c1",
        *args,
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**project_env(clone), "PYTHONHASHSEED": "0"},
        **popen,
    )


@pytest.mark.slow
def test_two_clones_one_results_folder_one_writer(tmp_path: Path) -> None:
    results = tmp_path / "scratch" / "study"
    first, second = copy_project(tmp_path / "a"), copy_project(tmp_path / "b")
    target = str(results / "corpora/en/train.txt")
    holder = _snakemake(first, results, target, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (results / LOCK_FILE).exists():
            assert holder.poll() is None and time.monotonic() < deadline, holder.stdout.read()
            time.sleep(0.2)
        os.killpg(holder.pid, signal.SIGSTOP)  # the first run holds the lock, paused
        owner = json.loads((results / LOCK_FILE).read_text("utf-8"))
        assert owner["pid"] == holder.pid
        blocked = _snakemake(second, results, target)
        out, _ = blocked.communicate(timeout=240)
        assert blocked.returncode != 0
        lines = [line for line in out.splitlines() if "is in use by another run" in line]
        assert len(lines) == 1, out
        assert f"results_dir {results.resolve()}" in lines[0]
        assert f"PID {holder.pid}" in lines[0] and str(first) in lines[0]
        assert not (results / "corpora/en/train.txt").exists()
        dry = _snakemake(second, results, target, "-n")  # a dry run takes no lock
        assert dry.wait(timeout=240) == 0
        os.killpg(holder.pid, signal.SIGKILL)  # the first run dies holding it
        holder.wait(timeout=60)
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
    after = _snakemake(second, results, target)
    out, _ = after.communicate(timeout=300)
    assert after.returncode == 0, out
    assert f"removed the stale lock of {socket.gethostname()} PID {holder.pid}" in out
    assert (results / "corpora/en/train.txt").is_file()
    assert not (results / LOCK_FILE).exists()  # released at the end of the run
