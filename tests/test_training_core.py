"""The training core shared by MLM and NMT: log, early stopping, resume, model families."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import BertConfig, BertForMaskedLM

from tokstudy.errors import TokstudyError
from tokstudy.models.family import BERT, CHARACTERBERT, family_for_tokenizer, family_of_model
from tokstudy.training.core import CHECKPOINT_FILE, EarlyStopping, TrainingRun, TrainLog

COLUMNS = ("step", "loss")


def test_log_keeps_the_rows_up_to_the_resumed_step(tmp_path: Path) -> None:
    log = TrainLog(tmp_path / "log.csv", COLUMNS)
    log.start(0)
    for step in (2, 4, 6):
        log.append({"step": step, "loss": 1.0 / step})
    log.start(4)
    log.append({"step": 6, "loss": 0.5})
    assert pd.read_csv(tmp_path / "log.csv").to_dict("list") == {
        "step": [2, 4, 6],
        "loss": [0.5, 0.25, 0.5],
    }
    log.start(0)
    assert pd.read_csv(tmp_path / "log.csv").empty


@given(st.lists(st.floats(0, 100), min_size=1, max_size=30), st.integers(1, 5))
def test_early_stopping_stops_after_patience_evaluations_without_gain(
    values: list[float], patience: int
) -> None:
    stopping = EarlyStopping(patience, "score")
    for index, value in enumerate(values):
        improved = stopping.update({"score": value, "index": index})
        best = max(values[: index + 1])
        assert improved == (value > max(values[:index], default=float("-inf")))
        assert stopping.best["score"] == best
        # the first evaluation reaching the best value is kept
        assert stopping.best["index"] == values.index(best)
        assert stopping.stop == (index - values.index(best) >= patience)
        rebuilt = EarlyStopping(patience, "score", **stopping.state())
        assert (rebuilt.best, rebuilt.stop) == (stopping.best, stopping.stop)


def _run(out_dir: Path, on_bad_checkpoint: str = "error", fingerprint: str = "a") -> TrainingRun:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 / (step + 1))
    return TrainingRun(
        out_dir,
        model,
        optimizer,
        scheduler,
        device=torch.device("cpu"),
        bf16=False,
        grad_clip=1.0,
        run_fingerprint=fingerprint,
        log_columns=COLUMNS,
        on_bad_checkpoint=on_bad_checkpoint,
    )


def test_run_resumes_weights_schedule_rng_and_loop_state(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first.resume() == (0, {})
    first.model(torch.ones(2, 3)).sum().backward()
    first.step()
    first.checkpoint(1, best={"score": 2.5})
    expected_noise = torch.rand(3)

    second = _run(tmp_path)
    assert second.resume() == (1, {"best": {"score": 2.5}})
    assert torch.equal(second.model.weight, first.model.weight)
    assert second.lr == first.lr == pytest.approx(0.05)
    assert torch.equal(torch.rand(3), expected_noise)  # the RNG continues where it was saved
    second.finish()
    assert not (tmp_path / CHECKPOINT_FILE).exists()


def test_foreign_or_corrupt_checkpoint_is_an_error_or_a_fresh_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = _run(tmp_path)
    run.checkpoint(3)
    with pytest.raises(TokstudyError, match="different training settings"):
        _run(tmp_path, fingerprint="b").resume()
    (tmp_path / CHECKPOINT_FILE).write_bytes(b"junk")
    with pytest.raises(TokstudyError, match=r"corrupt checkpoint .*delete it to restart"):
        _run(tmp_path).resume()
    with caplog.at_level(logging.WARNING):
        assert _run(tmp_path, on_bad_checkpoint="restart").resume() == (0, {})
    assert "corrupt checkpoint" in caplog.text


def test_model_families_are_told_apart_by_their_folders(tmp_path: Path) -> None:
    assert family_for_tokenizer(None) is CHARACTERBERT
    assert family_for_tokenizer(tmp_path) is BERT
    config = BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=1)
    BertForMaskedLM(config).save_pretrained(tmp_path / "bert")
    assert family_of_model(tmp_path / "bert") is BERT
    (tmp_path / "charbert").mkdir()
    (tmp_path / "charbert" / "charbert.json").write_text("{}", encoding="utf-8")
    assert family_of_model(tmp_path / "charbert") is CHARACTERBERT
    with pytest.raises(TokstudyError, match=r"empty: not a model folder"):
        family_of_model(tmp_path / "empty")
    with pytest.raises(TokstudyError, match="a BERT model needs its tokenizer folder"):
        BERT.task_tokenizer(tmp_path / "bert", None)
