"""Output paths of the command-line tools: checked before any work, written atomically.

:func:`check_output_file` refuses, in one line naming the flag, an output that is an
existing directory, that lies in a missing folder, or that is (or is inside) one of the
command's inputs; :func:`atomic_output` writes a file through a temporary file of the same
folder and :func:`os.replace`, so a reader never sees it half-written and a failure leaves
the previous file as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tokstudy.errors import TokstudyError


def _within(path: Path, other: Path) -> bool:
    """Whether ``path`` is ``other`` or inside it (both resolved, links followed)."""
    return path == other or path.is_relative_to(other)


def check_not_an_input(path: Path, inputs: Iterable[Path], flag: str) -> None:
    """One-line error when ``path`` equals or is inside one of ``inputs``."""
    resolved = Path(path).expanduser().resolve()
    for source in inputs:
        if _within(resolved, Path(source).expanduser().resolve()):
            raise TokstudyError(
                f"{flag} {path}: is the input {source} or inside it; it would be overwritten"
            )


def check_output_file(path: Path, inputs: Iterable[Path], flag: str) -> None:
    """One-line error naming ``flag`` when ``path`` cannot be the output file: an existing
    directory, a missing or non-folder parent, or one of ``inputs`` (or inside one). An
    existing file is replaced (atomically) when the command succeeds."""
    path = Path(path)
    if path.is_dir():
        raise TokstudyError(f"{flag} {path}: is a directory, expected a file name")
    parent = path.expanduser().parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise TokstudyError(f"{flag} {path}: the folder {parent} {what}")
    check_not_an_input(path, inputs, flag)


def check_output_folder(path: Path, inputs: Iterable[Path], flag: str) -> None:
    """One-line error naming ``flag`` when ``path`` cannot be an output folder: an existing
    file, or one of ``inputs`` (or inside one); a missing folder is created later."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise TokstudyError(f"{flag} {path}: is a file, expected a folder")
    check_not_an_input(path, inputs, flag)


@contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder to write to; moved onto ``path`` with
    :func:`os.replace` when the block succeeds, removed when it fails."""
    path = Path(path).expanduser()
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    staged = Path(name)
    try:
        yield staged
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)
