"""A write that the OS refuses (a full disk, a quota, no permission) as one line naming the
path and the OS's reason.

Libraries that write files themselves hide the reason: ``torch.save`` answers a full disk
with ``RuntimeError: [enforce fail at inline_container.cc:672] . unexpected pos …`` (raised
while handling the ``OSError``), safetensors with ``Error while serializing: I/O error: No
space left on device (os error 28)``, pandas and ``transformers`` with an ``OSError`` that
names no file. :func:`naming_write_failures` finds the reason and names the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from tokstudy.errors import TokstudyError

#: how libraries written in Rust (safetensors, tokenizers) spell an OS error they met
_OS_ERROR_CODE = re.compile(r"\bos error (\d+)\b")


def os_error(error: BaseException) -> tuple[int, str] | None:
    """The OS error (number, ``strerror``) behind ``error``: its own, that of an exception it
    was raised from or while handling, or an ``os error N`` in its text; ``None`` if none."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno:
            return current.errno, current.strerror or os.strerror(current.errno)
        code = _OS_ERROR_CODE.search(str(current))
        if code:
            return int(code.group(1)), os.strerror(int(code.group(1)))
        current = current.__cause__ or current.__context__
    return None


@contextmanager
def naming_write_failures(path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Turn a failure of the OS while writing ``what`` to ``path`` into one
    :class:`TokstudyError` naming the path and the OS's reason; other errors pass."""
    try:
        yield
    except TokstudyError:
        raise
    except Exception as exc:
        found = os_error(exc)
        if found is None:
            raise
        raise TokstudyError(f"{path}: cannot write {what} ({found[1]})") from exc
