"""Atomic training checkpoints: model, optimizer, scheduler, RNG states and step.

A checkpoint is one ``torch.save`` file written to a temporary name and renamed over the
old one, so a kill or a full disk never leaves a half-written checkpoint under the real
name. Loading
checks that the file is readable, complete and written by the same training settings
(their :func:`settings_fingerprint`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

import torch

from tokstudy.errors import TokstudyError
from tokstudy.files.write_errors import naming_write_failures

log = logging.getLogger(__name__)

REQUIRED_KEYS = frozenset({"step", "fingerprint", "model", "optimizer", "scheduler", "rng"})


def rng_states() -> dict[str, Any]:
    """The torch RNG states (CPU, and every CUDA device when present)."""
    states: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(states: dict[str, Any]) -> None:
    """Set the torch RNG states saved by :func:`rng_states`."""
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (temporary file, fsync, rename). A write the OS
    refuses (a full disk, a quota) is one line naming the path and the reason; the
    temporary file goes and the previous checkpoint stays as it was."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with naming_write_failures(path, "the checkpoint"):
        try:
            with tmp.open("wb") as handle:
                torch.save(state, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    log.info("checkpoint at step %d: %s", state["step"], path)


def settings_fingerprint(settings: dict[str, Any], extra: str = "") -> str:
    """Short hash of the settings (and ``extra``, e.g. a corpus hash) that fix the weights."""
    text = json.dumps(settings, sort_keys=True) + extra
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checkpoint_folder(root: Path | None, fingerprint: str) -> Path | None:
    """The checkpoint folder of a run under ``root`` (``root/<fingerprint>``; ``None``
    without a root): a run with other settings never meets this run's checkpoint."""
    return None if root is None else Path(root) / fingerprint


def load_checkpoint(
    path: Path, fingerprint: str, restart_hint: str = "delete it to restart"
) -> dict[str, Any]:
    """Read a checkpoint; a clear :class:`TokstudyError` if unreadable or from other settings.

    ``restart_hint`` ends the message of a corrupt checkpoint (how to train afresh).
    """
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (
        RuntimeError,
        EOFError,
        OSError,
        pickle.UnpicklingError,
        struct.error,
        zipfile.BadZipFile,
    ) as err:
        raise TokstudyError(
            f"{path}: corrupt checkpoint ({type(err).__name__}); {restart_hint}"
        ) from err
    if not isinstance(state, dict) or not set(state) >= REQUIRED_KEYS:
        expected = ", ".join(sorted(REQUIRED_KEYS))
        raise TokstudyError(f"{path}: incomplete checkpoint (expected keys {expected})")
    if state["fingerprint"] != fingerprint:
        raise TokstudyError(
            f"{path}: checkpoint was written with different training settings "
            f"({state['fingerprint']} != {fingerprint}); delete it or use another output folder"
        )
    return state
