"""Nothing lost on resume: a training job killed anywhere ends as an uninterrupted one.

For clm, MLM pretraining and NMT at tiny sizes, each job is killed by SIGKILL and by
SIGTERM at five points: before the first checkpoint, after one, while writing the model,
after the summary (all outputs written, the job not yet recorded by Snakemake) and during
the scoring job that follows. The second run's weights (every file of the model folder,
byte for byte), training log (timing columns aside) and scores equal those of an
uninterrupted run; it trains only the steps after its last checkpoint, none once the
outputs were written, and leaves ``checkpoints/`` empty. The matrix of each task runs in
``tests/kill_points.py`` (one process per task, each job a fork of it: see there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kill_points import CHECKPOINT_EVERY, POINTS, SIGNALS, TASKS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each task's matrix, the three drivers side by side."""
    root = tmp_path_factory.mktemp("kill_points")
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
    drivers = {
        task: subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("kill_points.py")),
                task,
                str(root / task),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for task in TASKS
    }
    found = {}
    for task, driver in drivers.items():
        output, _ = driver.communicate(timeout=900)
        assert driver.returncode == 0, output[-5000:]
        found[task] = json.loads((root / task / "matrix.json").read_text(encoding="utf-8"))
    return found


@pytest.mark.parametrize("signal_name", sorted(SIGNALS))
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("task", sorted(TASKS))
def test_a_killed_job_ends_as_an_uninterrupted_one(
    matrices: dict[str, dict], task: str, point: str, signal_name: str
) -> None:
    matrix = matrices[task]
    case = matrix["cases"][f"{point}-{signal_name}"]
    assert case["killed_by"] == signal_name, case
    assert all(status == 0 for status in case["second"]), case
    assert case["model_equal"], "the model files differ from the uninterrupted run's"
    assert case["log_equal"], "the training log differs from the uninterrupted run's"
    assert case["scores_equal"], "the scores differ from the uninterrupted run's"
    assert case["summary_written"]
    assert case["left_in_checkpoints"] == []
    if point in ("after_summary", "during_scoring"):
        assert case["steps_run"] == 0, "the finished training ran again"
        assert case["restored"] == (point == "after_summary")
        return
    expected = {"before_first_checkpoint": 0, "after_first_checkpoint": CHECKPOINT_EVERY}
    assert case["resumed_at"] == expected.get(point, case["resumed_at"])
    assert case["resumed_at"] % CHECKPOINT_EVERY == 0
    assert case["steps_run"] == matrix["total_steps"] - case["resumed_at"]
