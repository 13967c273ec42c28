"""One writer per study folder: a lock file in the results folder itself.

Snakemake's own lock lives in the working directory's ``.snakemake/``, so two clones of the
project writing the same absolute ``results_dir`` (the scratch set-up of docs/clusters.md)
would both run. A run (Snakemake's ``onstart``; dry runs and ``--unlock`` never take it)
creates :data:`LOCK_FILE` in the results folder with ``O_CREAT | O_EXCL`` and writes its
host, PID and start time into it; ``onsuccess`` and ``onerror`` remove it. A lock whose
owner is a process of this host that no longer runs (a run killed by SIGKILL, a crashed
node's restart) is stale: it is removed, with a note. A lock of a live process, or of
another host (whose processes cannot be checked from here), stops the run with one line
naming the folder, the owner's host and PID, and the file to remove when that run is
known to be gone.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError

#: the lock file of a results folder
LOCK_FILE = ".tokstudy-lock"


def _owner() -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cwd": os.getcwd(),
    }


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (``kill(pid, 0)``: no signal sent)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def read_owner(lock: Path) -> dict[str, Any]:
    """The owner recorded in ``lock`` (empty fields when it cannot be read)."""
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        owner = {}
    return owner if isinstance(owner, dict) else {}


def _stale(owner: dict[str, Any]) -> bool:
    """Whether the recorded owner is a process of this host that no longer runs."""
    pid = owner.get("pid")
    return owner.get("host") == socket.gethostname() and isinstance(pid, int) and not pid_alive(pid)


def acquire(results_dir: str | Path) -> Path:
    """Take the lock of ``results_dir`` (which must exist) for this process; a stale lock is
    replaced (noted on stderr); a held one is a one-line :class:`TokstudyError`."""
    folder = Path(results_dir)
    lock = folder / LOCK_FILE
    for _ in range(3):  # a stale lock removed, or one released meanwhile: try again
        try:
            handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = read_owner(lock)
            if owner.get("host") == socket.gethostname() and owner.get("pid") == os.getpid():
                return lock  # taken already by this process
            if not _stale(owner):
                raise TokstudyError(_held_message(folder, lock, owner)) from None
            print(
                f"tokstudy: note: {folder.resolve()}: removed the stale lock of "
                f"{owner.get('host')} PID {owner.get('pid')} (no longer running)",
                file=sys.stderr,
            )
            lock.unlink(missing_ok=True)
            continue
        except OSError as exc:
            raise TokstudyError(
                f"results_dir {str(results_dir)!r}: cannot create the lock {lock} "
                f"({exc.strerror or exc})"
            ) from None
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(_owner(), file)
            file.write("\n")
        return lock
    raise TokstudyError(_held_message(folder, lock, read_owner(lock)))


def _held_message(folder: Path, lock: Path, owner: dict[str, Any]) -> str:
    host, pid = owner.get("host", "?"), owner.get("pid", "?")
    where = owner.get("cwd", "?")
    since = owner.get("started", "?")
    return (
        f"results_dir {folder.resolve()} is in use by another run (host {host}, PID {pid}, "
        f"working directory {where}, since {since}); wait for it, or remove {lock.resolve()} "
        "if that run is gone"
    )


def release(results_dir: str | Path) -> None:
    """Remove the lock of ``results_dir`` if this process holds it (never another's)."""
    lock = Path(results_dir) / LOCK_FILE
    owner = read_owner(lock)
    if owner.get("host") == socket.gethostname() and owner.get("pid") == os.getpid():
        lock.unlink(missing_ok=True)
