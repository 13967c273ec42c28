"""One writer per study folder: a lock file in the results folder itself.

Snakemake's own lock lives in the working directory's ``.snakemake/``, so two clones of the
project writing the same absolute ``results_dir`` (the scratch set-up of docs/clusters.md)
would both run. A run (Snakemake's ``onstart``; dry runs and ``--unlock`` never take it)
holds :data:`LOCK_FILE` in the results folder: a file naming its host, PID, start time and
working directory, on which it keeps an exclusive ``flock`` for as long as it runs (the
kernel drops it when the process dies, whatever killed it). ``onsuccess`` and ``onerror``
remove it.

Taking the lock never shows another run a half-written file: the owner's record is written
and flocked under a temporary name, then linked to :data:`LOCK_FILE` (``link`` fails when
the name exists). A lock whose owner is a process of this host that no longer runs (a run
killed by SIGKILL, a crashed node's restart) is stale: it is replaced while its ``flock``
is held, after checking that the file under the name is still the one inspected, so of two
runs that find the same stale lock exactly one takes it (the other then finds the winner's
lock held). A lock of a live process, or of another host (whose processes cannot be checked
from here), stops the run with one line naming the folder, the owner's host and PID, and
the file to remove when that run is known to be gone. An empty or unreadable lock (not one
tokstudy wrote) is reported with the command that clears it; a lock that cannot be written
(a full disk, no permission) leaves no file behind and is reported with the OS's reason.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from tokstudy.errors import TokstudyError

#: the lock file of a results folder
LOCK_FILE = ".tokstudy-lock"
#: errors of a file system without ``flock`` (then the lock is a plain file, not atomic)
NO_FLOCK = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})
#: tries while another run is taking over the same lock, and the pause between them
ATTEMPTS, PAUSE_S = 20, 0.01

#: the lock file descriptor this process holds, per resolved results folder
_held: dict[Path, int] = {}


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


def _ours(owner: dict[str, Any]) -> bool:
    return owner.get("host") == socket.gethostname() and owner.get("pid") == os.getpid()


def _flock(fd: int) -> bool:
    """An exclusive ``flock`` on ``fd`` without waiting: whether it was free (True also on a
    file system without ``flock``, where a lock is only its file)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno not in NO_FLOCK:
            raise
    return True


def _new_lock_file(folder: Path) -> tuple[int, Path]:
    """This process's owner record under a temporary name, complete and flocked."""
    tmp = folder / f"{LOCK_FILE}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _flock(fd)  # a name no one else knows: always free
        data = (json.dumps(_owner()) + "\n").encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    return fd, tmp


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        here = path.stat()
    except FileNotFoundError:
        return False
    there = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read_fd(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


def acquire(results_dir: str | Path) -> Path:
    """Take the lock of ``results_dir`` (which must exist) for this process; a stale lock is
    replaced (noted on stderr); a held, unreadable or unwritable one is a one-line
    :class:`TokstudyError`."""
    folder = Path(results_dir)
    lock = folder / LOCK_FILE
    if folder.resolve() in _held:
        return lock
    try:
        fd, tmp = _new_lock_file(folder)
    except OSError as exc:
        raise TokstudyError(
            f"results_dir {folder.resolve()}: cannot write the lock {LOCK_FILE} "
            f"({exc.strerror or exc}); no lock taken, no run started"
        ) from None
    try:
        held = _place(folder, lock, fd, tmp)
    except BaseException:
        os.close(fd)
        raise
    finally:
        tmp.unlink(missing_ok=True)  # linked or renamed by now, or not taken
    if held != fd:  # our own lock from before: keep its descriptor
        os.close(fd)
    _held[folder.resolve()] = held
    return lock


def _place(folder: Path, lock: Path, fd: int, tmp: Path) -> int:
    """Put the new lock file ``tmp`` (open as ``fd``) under the name ``lock``, replacing a
    stale lock; the descriptor now held."""
    for _ in range(ATTEMPTS):
        try:
            os.link(tmp, lock)
            return fd
        except FileExistsError:
            pass
        try:
            old = os.open(lock, os.O_RDONLY)
        except FileNotFoundError:
            continue  # released meanwhile
        except OSError as exc:
            raise TokstudyError(_unreadable_message(folder, lock, exc.strerror)) from None
        keep = False
        try:
            if not _flock(old):  # a live run holds it, or is taking over a stale one
                if not _stale(read_owner(lock)):
                    raise TokstudyError(_held_message(folder, lock, read_owner(lock)))
                time.sleep(PAUSE_S)
                continue
            if not _same_file(old, lock):
                continue  # replaced while we looked
            try:
                owner = json.loads(_read_fd(old))
            except (OSError, ValueError) as exc:
                reason = "empty" if os.fstat(old).st_size == 0 else type(exc).__name__
                raise TokstudyError(_unreadable_message(folder, lock, reason)) from None
            if not isinstance(owner, dict):
                raise TokstudyError(_unreadable_message(folder, lock, "not a lock record"))
            if _ours(owner):
                keep = True
                return old  # taken already by this process
            if not _stale(owner):
                raise TokstudyError(_held_message(folder, lock, owner))
            os.rename(tmp, lock)  # atomic, and only the holder of the old flock gets here
            print(
                f"tokstudy: note: {folder.resolve()}: removed the stale lock of "
                f"{owner.get('host')} PID {owner.get('pid')} (no longer running)",
                file=sys.stderr,
            )
            return fd
        finally:
            if not keep:
                os.close(old)
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


def _unreadable_message(folder: Path, lock: Path, reason: str | None) -> str:
    return (
        f"results_dir {folder.resolve()}: its lock {lock.resolve()} cannot be read "
        f"({reason}), so whether another run uses the folder is unknown; if none does, "
        f"clear it with: rm {shlex.quote(str(lock.resolve()))}"
    )


def release(results_dir: str | Path) -> None:
    """Remove the lock of ``results_dir`` if this process holds it (never another's)."""
    folder = Path(results_dir)
    fd = _held.pop(folder.resolve(), None)
    if fd is None:
        return
    lock = folder / LOCK_FILE
    try:
        if _same_file(fd, lock):
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
    finally:
        os.close(fd)
