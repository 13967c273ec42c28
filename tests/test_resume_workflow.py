"""A training job killed by SIGKILL resumes through Snakemake from its checkpoint.

The checkpoint lives under ``<results_dir>/checkpoints/<rule>/...`` (outside the job's
declared output folder, which Snakemake removes after a failed job). Each test kills a
tiny job after its first checkpoint (the job process, then Snakemake's process group),
reruns with ``--rerun-incomplete``, reads from the job's log the step it resumed at, and
compares the final weights and training log with those of an uninterrupted run of the same
job.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
import torch
from safetensors.torch import load_file
from test_models_workflow import models_config
from workflow_support import REPO, snakemake

pytestmark = pytest.mark.slow

RUN = "models/runs/de/hf_wordpiece/300/seed0"
CASES = {
    "pretrain_mlm": (
        f"{RUN}/pretrain",
        {
            "tasks": ["mlm"],
            "pretrain": {
                "steps": 150,
                "batch_size": 8,
                "max_length": 32,
                "warmup_steps": 2,
                "log_every": 10,
                "checkpoint_every": 10,
            },
        },
    ),
    "train_clm": (
        f"{RUN}/clm/tiny/train",
        {
            "tasks": ["clm"],
            "clm": {
                "context": 32,
                "batch_size": 8,
                "epochs": 3.0,
                "validation_lines": 20,
                "log_every": 10,
                "checkpoint_every": 10,
            },
        },
    ),
}


def _kill_after_first_checkpoint(workdir: Path, config: Path, target: str, rule: str) -> int:
    """Start Snakemake on ``target``, SIGKILL the job and then Snakemake's process group
    once the first checkpoint exists; the step of the checkpoint left behind."""
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
    command += ["--directory", str(workdir), "--configfile", str(config), "--cores", "1"]
    process = subprocess.Popen(
        [*command, f"results/{target}"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    root = workdir / "results" / "checkpoints" / rule
    deadline = time.monotonic() + 300
    while not list(root.rglob("checkpoint.pt")):
        assert process.poll() is None, "the job ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 300 s"
        time.sleep(0.02)
    for job in psutil.Process(process.pid).children(recursive=True):
        job.send_signal(signal.SIGKILL)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    (checkpoint,) = root.rglob("checkpoint.pt")
    return int(torch.load(checkpoint, weights_only=True)["step"])


def _log(folder: Path) -> pd.DataFrame:
    """The training log without its timing columns."""
    timing = ["tokens_per_s", "flops_per_s", "mfu", "elapsed_s"]
    return pd.read_csv(folder / "train_log.csv").drop(columns=timing)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(folder / "model" / "model.safetensors")


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_killed_training_job_resumes_from_its_checkpoint(tmp_path: Path, rule: str) -> None:
    target, models = CASES[rule]
    config = models_config(tmp_path, tokenizers=["hf_wordpiece"], **models)
    step = _kill_after_first_checkpoint(tmp_path, config, target, rule)
    assert step > 0

    assert snakemake(tmp_path, "--unlock", config=config).returncode == 0
    rerun = snakemake(
        tmp_path, "--cores", "1", "--rerun-incomplete", f"results/{target}", config=config
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    log = next((tmp_path / "results" / "logs" / rule).rglob("*.log")).read_text()
    assert re.search(rf"resuming from \S+ at step {step}\b", log), log[-2000:]
    assert not list((tmp_path / "results" / "checkpoints").rglob("*.*"))  # all gone
    resumed = _weights(tmp_path / "results" / target)
    resumed_log = _log(tmp_path / "results" / target)

    # the same job uninterrupted, on the same inputs
    shutil.copytree(tmp_path / "results" / target, tmp_path / "resumed")
    straight = snakemake(
        tmp_path, "--cores", "1", "--forcerun", rule, f"results/{target}", config=config
    )
    assert straight.returncode == 0, straight.stderr[-3000:]
    log = next((tmp_path / "results" / "logs" / rule).rglob("*.log")).read_text()
    assert "resuming" not in log
    expected = _weights(tmp_path / "results" / target)
    assert resumed.keys() == expected.keys()
    assert all(torch.equal(resumed[key], expected[key]) for key in expected)
    # no row before the checkpoint lost with the folder Snakemake deleted (issue 54)
    pd.testing.assert_frame_equal(resumed_log, _log(tmp_path / "results" / target))
