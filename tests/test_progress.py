"""Progress in the logs (``tokstudy.runtime.progress``): tqdm lines with done, rate and time left at
most one per interval, a heartbeat for calls that report nothing, and the training loop's
line (every model the study trains: MLM, causal LM, NMT) as its steps go."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import pytest
from conftest import logged
from test_training_loop import _train

from tokstudy.runtime import progress
from tokstudy.runtime.progress import heartbeat

LOGGER = "tokstudy.test.progress"


def test_a_counter_logs_done_rate_and_time_left_at_most_once_an_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger(LOGGER)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        started = time.perf_counter()
        with progress.progress(40, "scoring", log, unit="line", interval=0.2) as bar:
            for _ in range(40):
                time.sleep(0.02)
                bar.update(1)
        elapsed = time.perf_counter() - started
    lines = logged(caplog, LOGGER)
    assert lines[0].startswith("scoring:   0% 0/40 [00:00<?")
    assert re.fullmatch(r"scoring: 100% 40/40 \[00:0\d<00:00, +[\d.]+line/s\]", lines[-1])
    middle = lines[1:-2]  # the last update's line and the closing line may repeat it
    assert middle, lines  # lines as it goes, not only at the end
    for line in middle:
        assert re.fullmatch(r"scoring: +\d+% \d+/40 \[00:0\d<00:0\d, +[\d.]+line/s\]", line)
    # at most one line per interval, besides the first and the closing one
    assert len(lines) - 2 <= elapsed / 0.2 + 1


def test_a_heartbeat_logs_while_a_silent_call_runs(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger(LOGGER)
    with caplog.at_level(logging.INFO, logger=LOGGER), heartbeat("training x", log, 0.05):
        time.sleep(0.5)
    lines = logged(caplog, LOGGER)
    assert len(lines) >= 4 and all(re.fullmatch(r"training x: 00:0\d elapsed", m) for m in lines)
    count = len(lines)
    time.sleep(0.2)
    assert len(logged(caplog, LOGGER)) == count  # the heartbeat stopped with the block


def test_the_training_loop_logs_its_steps_as_it_goes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    with caplog.at_level(logging.INFO, logger="tokstudy.training.loop"):
        _train(tmp_path, steps=6)
    lines = [m for m in logged(caplog, "tokstudy.training.loop") if m.startswith("training:")]
    done = [int(re.match(r"training: +\d+% (\d)/6 \[", m).group(1)) for m in lines]
    assert done[:7] == [0, 1, 2, 3, 4, 5, 6]  # every step, before the log's rows at 2, 4, 6
    assert re.search(r"step/s\], loss [\d.e-]+$", lines[-1])
