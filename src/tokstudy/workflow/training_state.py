"""What a training job keeps under ``checkpoints/`` until Snakemake has recorded it.

A training job keeps its state outside its declared outputs, under its checkpoint root
``checkpoints/<rule>/<run>/`` (:func:`tokstudy.workflow.study.paths.checkpoint_path`),
in a folder per settings fingerprint: the checkpoint and a copy of the training log while
it trains, then, once its outputs are written, those outputs (hard links) under a record
naming its run folder (:func:`tokstudy.training.run_state.keep_outputs`). A job killed
after that point, whose outputs Snakemake deletes, takes them back when it reruns instead
of training again. That record must go once Snakemake has recorded the job:

- :func:`checkpoint_root` (each training step, before training): outputs kept by a job
  whose code fingerprint (``params.code``) differs from this job's go, so a code change
  retrains (an unfinished run's checkpoint stays and resumes, as before);
- :func:`remember` (``onstart``) notes the records that exist when a run starts;
  :func:`drop_recorded` (``onsuccess``, and ``onerror`` unless ``--keep-incomplete``)
  removes the state folders whose record was written or rewritten during the run and
  whose run folder exists: Snakemake deletes a failed job's outputs before either hook,
  so such a job succeeded and is recorded. A record from before the run (Snakemake itself
  was killed) stays: its job reruns from it, or it stays until the folder is deleted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tokstudy.training.run_state import FINAL_DIR, FINAL_RECORD
from tokstudy.workflow.study.paths import CHECKPOINTS

#: the code fingerprint of the job that last ran under a checkpoint root
CODE_FILE = "code.json"

#: per results folder: the records that existed when this process's run started
_before: dict[Path, dict[Path, tuple[int, int]]] = {}


def checkpoint_root(root: str | Path, code: str) -> Path:
    """A training job's checkpoint root (its ``params.checkpoints``), without the outputs
    kept there by a job of other code than ``code`` (its ``params.code``)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    stamp = root / CODE_FILE
    try:
        same = json.loads(stamp.read_text(encoding="utf-8")) == code
    except (OSError, ValueError):
        same = False
    if not same:
        for record in root.glob(f"*/{FINAL_RECORD}"):
            shutil.rmtree(record.parent / FINAL_DIR, ignore_errors=True)
            record.unlink(missing_ok=True)
        stamp.write_text(json.dumps(code) + "\n", encoding="utf-8")
    return root


def _records(results_dir: str | Path) -> dict[Path, tuple[int, int]]:
    """The final records under the results folder's checkpoints, with inode and mtime."""
    found = {}
    for record in sorted(Path(results_dir, CHECKPOINTS).glob(f"**/{FINAL_RECORD}")):
        try:
            stat = record.stat()
        except FileNotFoundError:
            continue
        found[record] = (stat.st_ino, stat.st_mtime_ns)
    return found


def remember(results_dir: str | Path) -> None:
    """Note the records that exist as this run starts (``onstart``)."""
    _before[Path(results_dir).resolve()] = _records(results_dir)


def drop_recorded(results_dir: str | Path) -> list[Path]:
    """Remove the state folders of the jobs that finished during this run and are recorded
    (see the module doc); the folders removed."""
    before = _before.get(Path(results_dir).resolve(), {})
    checkpoints = Path(results_dir, CHECKPOINTS)
    dropped = []
    for record, identity in _records(results_dir).items():
        if before.get(record) == identity:
            continue
        try:
            out_dir = Path(json.loads(record.read_text(encoding="utf-8"))["out_dir"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not out_dir.is_dir():
            continue  # the job failed: Snakemake deleted its outputs; it reruns from here
        state = record.parent
        shutil.rmtree(state, ignore_errors=True)
        dropped.append(state)
        _remove_empty_parents(state.parent, checkpoints)
    return dropped


def _remove_empty_parents(folder: Path, top: Path) -> None:
    """Remove ``folder`` and its parents up to ``top`` (kept) while they hold at most the
    code stamp."""
    while folder != top and top in folder.parents:
        entries = list(folder.iterdir()) if folder.is_dir() else []
        if any(entry.name != CODE_FILE for entry in entries):
            return
        for entry in entries:
            entry.unlink()
        folder.rmdir()
        folder = folder.parent
