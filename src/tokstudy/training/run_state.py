"""The state folder of a training run, beside its checkpoint: what a finished run keeps.

No ``torch`` here: the workflow's hooks read these names at every Snakemake start
(:mod:`tokstudy.workflow.training_state`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

from tokstudy.files.write_errors import naming_write_failures

log = logging.getLogger(__name__)

#: the saved model in a training run's folder (what the scoring jobs read)
MODEL_DIR = "model"
#: the checkpoint file of a run (:mod:`tokstudy.training.checkpoint`)
CHECKPOINT_FILE = "checkpoint.pt"

#: a finished run's outputs, kept beside its checkpoint until the job is recorded
FINAL_DIR = "final"
#: written before :data:`FINAL_DIR` appears: the run folder whose outputs it holds
FINAL_RECORD = "final.json"


def link_or_copy(source: str, target: str) -> None:
    """A hard link (no second copy on disk), or a copy across file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _write_record(state_dir: Path, out_dir: Path) -> None:
    record = state_dir / FINAL_RECORD
    staged = record.with_name(record.name + ".tmp")
    staged.write_text(json.dumps({"out_dir": str(out_dir.resolve())}) + "\n", encoding="utf-8")
    os.replace(staged, record)


def keep_outputs(out_dir: Path, checkpoint_dir: Path | None) -> None:
    """The last act of a finished run, its outputs complete in ``out_dir``: they become the
    run's state, in place of its checkpoint.

    With a ``checkpoint_dir`` outside the outputs (the workflow's), the outputs are
    hard-linked into ``checkpoint_dir/final`` (copied across file systems) under a record
    naming ``out_dir``: a job killed from here on, whose outputs Snakemake then deletes,
    gets them back (:func:`restore_outputs`) instead of training again; the workflow
    removes the folder once Snakemake has recorded the job
    (:mod:`tokstudy.workflow.training_state`). The checkpoint and the rest of the run's
    state (its log, an NMT run's best model) go.
    """
    out_dir = Path(out_dir)
    if checkpoint_dir is None or Path(checkpoint_dir).resolve() == out_dir.resolve():
        Path(out_dir, CHECKPOINT_FILE).unlink(missing_ok=True)
        return
    state = Path(checkpoint_dir)
    staged = state / (FINAL_DIR + ".tmp")
    shutil.rmtree(staged, ignore_errors=True)
    with naming_write_failures(state / FINAL_DIR, "the finished run's outputs"):
        shutil.copytree(out_dir, staged, copy_function=link_or_copy)
        _write_record(state, out_dir)
        shutil.rmtree(state / FINAL_DIR, ignore_errors=True)
        os.replace(staged, state / FINAL_DIR)
    for entry in state.iterdir():
        if entry.is_dir() and entry.name != FINAL_DIR:
            shutil.rmtree(entry)
        elif not entry.is_dir() and entry.name != FINAL_RECORD:
            entry.unlink()


def restore_outputs(out_dir: Path, checkpoint_dir: Path | None, write: bool = True) -> bool:
    """Put the outputs a finished run kept (:func:`keep_outputs`) back into ``out_dir``
    (what was there goes; nothing is written unless ``write``: a worker that is not rank
    0); whether there were any. The record is rewritten: it now stands for this job."""
    final = Path(checkpoint_dir, FINAL_DIR) if checkpoint_dir is not None else None
    if final is None or not final.is_dir():
        return False
    if not write:
        return True
    out_dir = Path(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    with naming_write_failures(out_dir, "the finished run's outputs"):
        shutil.copytree(final, out_dir, copy_function=link_or_copy)
        _write_record(final.parent, out_dir)
    log.info("%s: the run had finished: its outputs restored from %s, no training", out_dir, final)
    return True
