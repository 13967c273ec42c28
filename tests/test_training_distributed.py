"""Several processes per model (DDP over gloo on the CPU): the same loss curve as one
process with the same global batch, resuming after a kill, one-line errors."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
from test_models_clm import FAST, _train, toy_cell  # noqa: F401 (a fixture)
from test_models_pretrain import CONFIG as MLM_CONFIG
from test_models_pretrain import corpus_dir, english, tokenizer  # noqa: F401 (fixtures)
from test_nmt_pipeline import RESUME_CONFIG as NMT_CONFIG
from test_nmt_pipeline import _train as _train_nmt
from test_nmt_pipeline import corpus, tokenizers  # noqa: F401 (fixtures)
from transformers import LlamaForCausalLM

from tokstudy.errors import TokstudyError
from tokstudy.models.config import ClmConfig, from_mapping
from tokstudy.models.pretrain import pretrain_bert
from tokstudy.training import distributed
from tokstudy.training.core import LOG_FILE


def _weights(model_dir: Path) -> dict[str, torch.Tensor]:
    return LlamaForCausalLM.from_pretrained(model_dir).state_dict()


def _assert_same_curves(a: Path, b: Path, columns: tuple[str, ...], tolerance: float) -> None:
    """The training logs of runs ``a`` and ``b`` have the same steps and the ``columns``
    agree within ``tolerance`` (where logged)."""
    curve = [pd.read_csv(run / LOG_FILE) for run in (a, b)]
    assert list(curve[0]["step"]) == list(curve[1]["step"])
    for column in columns:
        x, y = curve[0][column].to_numpy(), curve[1][column].to_numpy()
        assert abs(x - y)[~pd.isna(x)].max() < tolerance, column
    assert curve[0][columns[0]].iloc[-1] < curve[0][columns[0]].iloc[0]  # it learned


@pytest.mark.slow
def test_two_gloo_processes_follow_the_curve_of_one_with_the_same_global_batch(
    toy_cell,  # noqa: F811
    tmp_path: Path,
) -> None:
    one = _train(toy_cell, tmp_path / "one")
    two = _train(toy_cell, tmp_path / "two", devices=2)
    # each process takes 2 of the 4 rows; DDP averages the two gradients: the same update
    # up to the order of float sums (tolerance 1e-4 on losses of about 1-3 nats)
    _assert_same_curves(tmp_path / "one", tmp_path / "two", ("loss", "validation_loss"), 1e-4)
    a, b = _weights(one), _weights(two)
    assert all(torch.allclose(a[key], b[key], atol=1e-4) for key in a)
    summary = json.loads((tmp_path / "two" / "train.json").read_text())
    assert summary["devices"] == 2 and summary["steps"] == summary["planned_steps"]
    assert not list(tmp_path.glob("two/*.tmp")) and not (tmp_path / "two/checkpoint.pt").exists()


@pytest.mark.slow
def test_two_gloo_processes_pretrain_bert_like_one(
    tmp_path: Path,
    corpus_dir: Path,  # noqa: F811
    tokenizer,  # noqa: F811
) -> None:
    config = dataclasses.replace(MLM_CONFIG, dropout=0.0)  # no per-process randomness
    one = pretrain_bert(tokenizer, corpus_dir, tmp_path / "one", config)
    two_config = dataclasses.replace(config, devices=2)
    two = pretrain_bert(tokenizer, corpus_dir, tmp_path / "two", two_config)
    # the masks are drawn for the global batch, then each process takes its rows; each
    # process's mean loss counts by its share of the masked tokens
    _assert_same_curves(tmp_path / "one", tmp_path / "two", ("loss",), 1e-4)
    assert json.loads((tmp_path / "two" / "pretrain.json").read_text())["devices"] == 2
    assert one.name == two.name


@pytest.mark.slow
def test_two_gloo_processes_train_translation_like_one(
    tmp_path: Path,
    corpus: dict[str, Path],  # noqa: F811
    tokenizers: dict,  # noqa: F811
) -> None:
    config = dataclasses.replace(NMT_CONFIG, dropout=0.0)  # no per-process randomness
    _train_nmt(corpus, tokenizers, tmp_path / "one", config)
    two_config = dataclasses.replace(config, devices=2)
    summary = _train_nmt(corpus, tokenizers, tmp_path / "two", two_config)
    # token-budget batches: the two halves hold different numbers of target tokens, each
    # process's mean loss counts by its share
    _assert_same_curves(tmp_path / "one", tmp_path / "two", ("loss", "nll"), 1e-4)
    assert summary["devices"] == 2


_RUN = """
import json, sys
from pathlib import Path
from tokstudy.models.clm.train import train_clm
from tokstudy.models.config import ClmConfig, from_mapping
cell, out, settings = json.loads(sys.argv[1])
config = from_mapping(ClmConfig, settings, "models.clm")
train_clm(cell["tokenizer"], cell["corpus"], cell["train"], Path(out), config)
"""


@pytest.mark.slow
def test_a_killed_two_process_run_leaves_no_model_and_resumes(
    toy_cell,  # noqa: F811
    tmp_path: Path,
) -> None:
    settings = {**FAST, "epochs": 20, "checkpoint_every": 3, "devices": 2}
    out = tmp_path / "killed"
    cell = {key: str(value) for key, value in toy_cell.items()}
    job = subprocess.Popen(
        [sys.executable, "-c", _RUN, json.dumps([cell, str(out), settings])],
        start_new_session=True,  # the launcher and its two workers: one process group
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    deadline = time.monotonic() + 300
    while not (out / "checkpoint.pt").exists():
        assert job.poll() is None and time.monotonic() < deadline, "no checkpoint written"
        time.sleep(0.05)
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    # killed mid-run: no summary, no model folder, half-written or not
    assert not (out / "train.json").exists() and not (out / "model").exists()
    assert not list(out.glob("*.tmp"))
    longer = {"epochs": 20, "checkpoint_every": 3, "devices": 2}
    resumed = _train(toy_cell, out, **longer)
    whole = _train(toy_cell, tmp_path / "whole", **longer)
    log = pd.read_csv(out / "train_log.csv")
    assert log["step"].is_unique and log["step"].is_monotonic_increasing
    summary = json.loads((out / "train.json").read_text())
    assert summary["steps"] == summary["planned_steps"]
    a, b = _weights(whole), _weights(resumed)
    assert all(torch.allclose(a[key], b[key], atol=1e-5) for key in a)


def test_more_gpus_than_the_machine_has_is_one_line_naming_the_key() -> None:
    found = torch.cuda.device_count()
    with pytest.raises(TokstudyError) as error:
        distributed.check_devices(found + 1, torch.device("cuda"), "models.clm.devices")
    assert str(error.value) == (
        f"models.clm.devices: {found + 1} GPUs requested, {found} CUDA GPU(s) found"
    )
    distributed.check_devices(found + 1, torch.device("cpu"), "models.clm.devices")


def test_a_batch_that_does_not_split_evenly_is_refused() -> None:
    with pytest.raises(TokstudyError) as error:
        from_mapping(ClmConfig, {"batch_size": 6, "devices": 2, "accumulate": 2}, "models.clm")
    assert str(error.value) == (
        "models.clm.batch_size (6) does not split into devices × accumulate = 4 equal parts"
    )
    assert from_mapping(ClmConfig, {"batch_size": 8, "devices": 2, "accumulate": 2}).devices == 2


@pytest.mark.slow
def test_accumulated_micro_batches_follow_the_curve_of_the_whole_batch(
    toy_cell,  # noqa: F811
    tmp_path: Path,
) -> None:
    whole = _train(toy_cell, tmp_path / "whole")
    parts = _train(toy_cell, tmp_path / "parts", accumulate=2)
    _assert_same_curves(tmp_path / "whole", tmp_path / "parts", ("loss",), 1e-4)
    wa, wb = _weights(whole), _weights(parts)
    assert all(torch.allclose(wa[key], wb[key], atol=1e-4) for key in wa)
    assert not all(torch.equal(wa[key], wb[key]) for key in wa)  # two backward passes ran


def test_one_process_is_not_distributed_and_keeps_its_whole_batch() -> None:
    batch = {"ids": torch.arange(6).reshape(3, 2)}
    assert not distributed.active() and distributed.is_main()
    assert distributed.world_size() == 1 and distributed.shard(batch)["ids"].shape == (3, 2)
    assert distributed.sum_over_workers({"loss": 2.0}) == {"loss": 2.0}
