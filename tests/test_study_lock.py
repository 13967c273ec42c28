"""One writer per study folder (issue 40): the lock in the results folder itself."""

from __future__ import annotations

import errno
import json
import os
import shlex
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


@pytest.mark.parametrize(("content", "reason"), [("", "empty"), ("{half", "JSONDecodeError")])
def test_an_empty_or_unreadable_lock_names_the_command_that_clears_it(
    tmp_path: Path, content: str, reason: str
) -> None:
    (tmp_path / LOCK_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(TokstudyError) as error:
        study_lock.acquire(tmp_path)
    message = str(error.value)
    assert "\n" not in message and f"({reason})" in message
    command = message.split("clear it with: ")[1]
    assert shlex.split(command) == ["rm", str((tmp_path / LOCK_FILE).resolve())]
    subprocess.run(shlex.split(command), check=True)  # the command given does clear it
    acquire(tmp_path)
    release(tmp_path)


def test_a_lock_that_cannot_be_written_leaves_no_file_and_names_folder_and_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(TokstudyError) as error:
        acquire(tmp_path)
    monkeypatch.undo()
    message = str(error.value)
    assert "\n" not in message
    assert f"results_dir {tmp_path.resolve()}: cannot write the lock" in message
    assert "No space left on device" in message
    assert list(tmp_path.iterdir()) == []  # neither the lock nor a temporary file
    acquire(tmp_path)  # once there is space again, the folder is free
    release(tmp_path)


def test_a_file_system_without_flock_still_gets_a_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NFS without lockd answers ``flock`` with ENOLCK: the lock is then its file alone."""

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(study_lock.fcntl, "flock", no_locks)
    lock = acquire(tmp_path)
    assert json.loads(lock.read_text("utf-8"))["pid"] == os.getpid()
    release(tmp_path)
    assert list(tmp_path.iterdir()) == []


def _contender(folder: Path, go: int, said: int, done: int) -> None:
    """A forked run: waits for ``go``, tries the lock, writes 1 (taken) or 0 to ``said``,
    holds what it took until ``done`` is written, then ends."""
    code = 1
    try:
        os.read(go, 1)
        try:
            acquire(folder)
            os.write(said, b"1")
        except TokstudyError:
            os.write(said, b"0")
        os.read(done, 1)
        code = 0
    finally:
        os._exit(code)


def race(root: Path, trials: int) -> list[int]:
    """``trials`` times: two processes released together onto a dead run's lock in a folder
    of their own; how many of the two took it, per trial."""
    dead = os.fork()
    if dead == 0:  # pragma: no cover - the child
        os._exit(0)
    os.waitpid(dead, 0)  # reaped: its PID is not reused before the PIDs wrap around
    winners = []
    for trial in range(trials):
        folder = root / str(trial)
        folder.mkdir()
        _write_owner(folder, host=socket.gethostname(), pid=dead)
        (go, start), (said, answer), (done, finish) = os.pipe(), os.pipe(), os.pipe()
        pids = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                _contender(folder, go, answer, done)
            pids.append(pid)
        os.write(start, b"gg")
        answers = os.read(said, 1) + os.read(said, 1)
        os.write(finish, b"dd")
        for pid in pids:
            os.waitpid(pid, 0)
        for fd in (go, start, said, answer, done, finish):
            os.close(fd)
        winners.append(answers.count(b"1"))
    return winners


def test_two_runs_on_one_stale_lock_exactly_one_proceeds(tmp_path: Path) -> None:
    """200 races on a stale lock, run in a small process (forks of it are quick)."""
    code = (
        "import sys, pathlib, test_study_lock as t; print(t.race(pathlib.Path(sys.argv[1]), 200))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        check=True,
    )
    winners = json.loads(done.stdout)
    lost = [trial for trial, won in enumerate(winners) if won != 1]
    assert len(winners) == 200 and not lost, f"{len(lost)} of 200 trials: not one winner"


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
