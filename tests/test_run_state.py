"""A training run's state outside its outputs (issue 54): the log and the finished outputs
kept beside the checkpoint, what the workflow removes and when, and writes that the OS
refuses (a full disk) named in one line with the path, the previous file left usable."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import torch

from tokstudy.analyses.table_files import write_table
from tokstudy.errors import TokstudyError
from tokstudy.files.write_errors import naming_write_failures, os_error
from tokstudy.training.checkpoint import load_checkpoint, save_checkpoint
from tokstudy.training.core import TrainLog, recover_saved, save_atomically
from tokstudy.training.run_state import (
    CHECKPOINT_FILE,
    FINAL_DIR,
    FINAL_RECORD,
    keep_outputs,
    restore_outputs,
)
from tokstudy.workflow import training_state

COLUMNS = ("step", "loss")
FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _rows(path: Path) -> list[int]:
    return list(pd.read_csv(path)["step"])


def test_a_resumed_log_takes_its_rows_from_the_copy_beside_the_checkpoint(tmp_path: Path) -> None:
    out, kept = tmp_path / "out" / "log.csv", tmp_path / "state" / "log.csv"
    out.parent.mkdir()
    kept.parent.mkdir()
    log = TrainLog(out, COLUMNS, kept)
    log.start(0)
    for step in (2, 4, 6):
        log.append({"step": step, "loss": 1.0 / step})
        assert _rows(out) == _rows(kept)  # each row in both files as soon as it is logged
    out.unlink()  # Snakemake deletes the outputs of a killed job
    log.start(4)
    assert _rows(out) == _rows(kept) == [2, 4]
    assert list(pd.read_csv(out)["loss"]) == [0.5, 0.25]


def _finished_run(tmp_path: Path) -> tuple[Path, Path]:
    out, state = tmp_path / "results" / "run", tmp_path / "results" / "checkpoints" / "r" / "fp"
    (out / "model").mkdir(parents=True)
    (out / "model" / "weights.bin").write_bytes(b"\x00\x01weights")
    (out / "train.json").write_text('{"steps": 3}', encoding="utf-8")
    state.mkdir(parents=True)
    (state / CHECKPOINT_FILE).write_bytes(b"checkpoint")
    (state / "train_log.csv").write_text("step,loss\n", encoding="utf-8")
    return out, state


def test_a_finished_run_keeps_its_outputs_and_gets_them_back(tmp_path: Path) -> None:
    out, state = _finished_run(tmp_path)
    keep_outputs(out, state)
    assert sorted(p.name for p in state.iterdir()) == [FINAL_DIR, FINAL_RECORD]
    assert json.loads((state / FINAL_RECORD).read_text())["out_dir"] == str(out.resolve())
    kept = state / FINAL_DIR / "model" / "weights.bin"
    assert kept.read_bytes() == b"\x00\x01weights"
    assert os.path.samefile(kept, out / "model" / "weights.bin")  # a link, not a copy
    for path in sorted(out.rglob("*"), reverse=True):  # Snakemake deletes the outputs
        path.unlink() if path.is_file() else path.rmdir()
    out.rmdir()
    assert restore_outputs(out, state)
    assert (out / "model" / "weights.bin").read_bytes() == b"\x00\x01weights"
    assert (out / "train.json").read_text() == '{"steps": 3}'
    assert not restore_outputs(tmp_path / "other", tmp_path / "no-state")


def test_without_a_checkpoint_folder_the_run_folder_is_the_state(tmp_path: Path) -> None:
    out, _ = _finished_run(tmp_path)
    (out / CHECKPOINT_FILE).write_bytes(b"checkpoint")
    keep_outputs(out, None)
    assert not (out / CHECKPOINT_FILE).exists() and (out / "train.json").exists()
    assert not restore_outputs(out, None)


def test_the_workflow_drops_what_jobs_of_this_run_kept_once_recorded(tmp_path: Path) -> None:
    results = tmp_path / "results"
    earlier_out, earlier = _finished_run(tmp_path)
    keep_outputs(earlier_out, earlier)  # a job of a run that Snakemake's death cut short
    training_state.remember(results)  # onstart
    failed_out = results / "failed"
    failed_out.mkdir()
    (failed_out / "train.json").write_text("{}", encoding="utf-8")
    failed = results / "checkpoints" / "r2" / "fp"
    failed.mkdir(parents=True)
    keep_outputs(failed_out, failed)
    (failed_out / "train.json").unlink()
    failed_out.rmdir()  # killed after keeping them: Snakemake deleted its outputs
    done_out = results / "done"
    done_out.mkdir()
    (done_out / "train.json").write_text("{}", encoding="utf-8")
    done = results / "checkpoints" / "r3" / "deeper" / "fp"
    done.mkdir(parents=True)
    (done.parent / training_state.CODE_FILE).write_text('"c"', encoding="utf-8")
    keep_outputs(done_out, done)
    assert training_state.drop_recorded(results) == [done]  # onsuccess / onerror
    assert not (results / "checkpoints" / "r3").exists()  # empty folders go too
    assert (earlier / FINAL_RECORD).exists() and (failed / FINAL_RECORD).exists()
    training_state.remember(results)  # the next run: the failed job gets its outputs back
    assert restore_outputs(failed_out, failed)
    assert training_state.drop_recorded(results) == [failed]
    assert (earlier / FINAL_RECORD).exists()


def test_outputs_kept_by_other_code_are_not_restored(tmp_path: Path) -> None:
    out, state = _finished_run(tmp_path)
    root = state.parent
    assert training_state.checkpoint_root(root, "code-1") == root
    keep_outputs(out, state)
    assert training_state.checkpoint_root(str(root), "code-1") == root
    assert (state / FINAL_DIR).is_dir()  # the same code: kept
    (state / CHECKPOINT_FILE).write_bytes(b"an unfinished run's checkpoint")
    training_state.checkpoint_root(root, "code-2")
    assert not (state / FINAL_DIR).exists() and not (state / FINAL_RECORD).exists()
    assert (state / CHECKPOINT_FILE).exists()  # an unfinished run still resumes
    assert not restore_outputs(out, state)


# --- writes the OS refuses


class FullDisk:
    """A binary file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, handle, room: int) -> None:
        self.handle, self.room = handle, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name: str):
        return getattr(self.handle, name)

    def __enter__(self) -> FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def _state(step: int) -> dict:
    model = torch.nn.Linear(64, 64)
    return {
        "step": step,
        "fingerprint": "f",
        "model": model.state_dict(),
        "optimizer": {},
        "scheduler": {},
        "rng": {"torch": torch.get_rng_state()},
    }


def test_a_full_disk_during_a_checkpoint_names_it_and_keeps_the_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, _state(3))
    real_open = Path.open

    def full_disk_open(self: Path, mode: str = "r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        return FullDisk(handle, room=2000) if self.name.endswith(".tmp") else handle

    monkeypatch.setattr(Path, "open", full_disk_open)
    with pytest.raises(TokstudyError) as error:
        save_checkpoint(path, _state(6))  # torch.save hides the reason in a RuntimeError
    monkeypatch.undo()
    message = str(error.value)
    assert message == f"{path}: cannot write the checkpoint (No space left on device)"
    assert isinstance(error.value.__cause__, RuntimeError)
    assert load_checkpoint(path, "f")["step"] == 3  # the previous checkpoint is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]


def test_a_full_disk_while_saving_a_model_keeps_the_previous_one(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    save_atomically(lambda d: (d.mkdir(), (d / "w.bin").write_bytes(b"old")), folder)

    def half_saved(directory: Path) -> None:
        directory.mkdir()
        (directory / "config.json").write_text("{}", encoding="utf-8")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as transformers raises it

    with pytest.raises(TokstudyError, match=rf"^{folder}: cannot write the model \(No space"):
        save_atomically(half_saved, folder)
    assert (folder / "w.bin").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_kill_between_the_renames_of_a_save_leaves_the_old_folder(tmp_path: Path) -> None:
    folder, old = tmp_path / "model", tmp_path / "model.old"
    old.mkdir()
    (old / "w.bin").write_bytes(b"old")  # killed after the old folder was moved aside
    recover_saved(folder)
    assert (folder / "w.bin").read_bytes() == b"old" and not old.exists()


def test_a_table_on_a_full_disk_is_one_line_with_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args, **kwargs) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # pandas names no file

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    csv = tmp_path / "t.csv"
    with pytest.raises(TokstudyError) as error:
        write_table(pd.DataFrame({"a": [1]}), csv, tmp_path / "t.md", "T")
    assert str(error.value) == f"{csv}: cannot write the table (No space left on device)"


@pytest.mark.parametrize(
    ("error", "found"),
    [
        (FULL, (errno.ENOSPC, "No space left on device")),
        (
            RuntimeError("Error while serializing: I/O error: Disk quota exceeded (os error 122)"),
            (122, os.strerror(122)),
        ),
        (ValueError("a bug, not the disk"), None),
    ],
)
def test_the_os_reason_is_found_where_libraries_put_it(error: Exception, found) -> None:
    assert os_error(error) == found
    if found is None:
        with pytest.raises(ValueError), naming_write_failures("x", "it"):
            raise error
