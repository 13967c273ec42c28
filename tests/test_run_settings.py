"""The run settings every trained model shares (clm, MLM, NMT) and the one optimizer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from tokstudy.errors import TokstudyError
from tokstudy.models.config import ClmConfig, PretrainConfig
from tokstudy.nmt.config import TrainConfig
from tokstudy.training.config import RunSettings, from_mapping
from tokstudy.training.loop import LoopSettings
from tokstudy.training.optimizer import build_optimizer

#: where a run lives: what :meth:`LoopSettings.of_run` takes beside the section's keys
RUN = {"out_dir": Path("run"), "run_fingerprint": "f"}

SECTIONS = [
    (PretrainConfig, "models.pretrain"),
    (ClmConfig, "models.clm"),
    (TrainConfig, "nmt.train"),
]


@pytest.mark.parametrize(("cls", "section"), SECTIONS)
def test_every_training_section_takes_the_shared_run_keys(cls, section) -> None:
    config = from_mapping(
        cls,
        {
            "seed": 3,
            "lr": 0.002,
            "weight_decay": 0.05,
            "grad_clip": 0.5,
            "checkpoint_every": 7,
            "log_every": 5,
            "on_bad_checkpoint": "restart",
            "compile": False,
            "accumulate": 2,
        },
        section,
    )
    assert isinstance(config, RunSettings)
    assert (config.seed, config.lr, config.weight_decay, config.grad_clip) == (3, 0.002, 0.05, 0.5)
    assert (config.checkpoint_every, config.log_every, config.on_bad_checkpoint) == (
        7,
        5,
        "restart",
    )


@pytest.mark.parametrize(("cls", "section"), SECTIONS)
@pytest.mark.parametrize(("key", "value"), [("lr", 0.0), ("lr", -1e-3), ("grad_clip", 0.0)])
def test_an_out_of_range_run_key_is_one_line_naming_it(cls, section, key, value) -> None:
    with pytest.raises(TokstudyError, match=rf"^{section}\.{key} must be .*got {value}$"):
        cls(**{key: value})


@pytest.mark.parametrize(("cls", "section"), SECTIONS)
def test_the_fingerprinted_settings_leave_out_only_what_does_not_change_the_weights(
    cls, section
) -> None:
    config = cls()
    same_weights = replace(
        config,
        device="cpu",
        on_missing_gpu="error",
        devices=2,
        checkpoint_every=3,
        log_every=4,
        on_bad_checkpoint="restart",
    )
    assert same_weights.weight_settings() == config.weight_settings()
    for key, value in [("lr", 1e-4), ("seed", 9), ("weight_decay", 0.3), ("accumulate", 2)]:
        assert replace(config, **{key: value}).weight_settings() != config.weight_settings(), key
    assert {"lr", "seed", "grad_clip", "compile"} <= set(config.weight_settings())


def test_each_section_leaves_out_its_own_evaluation_keys() -> None:
    clm = ClmConfig()
    assert replace(clm, heldout_max_lines=9, bootstrap_resamples=500).weight_settings() == (
        clm.weight_settings()
    )
    mlm = PretrainConfig()
    assert replace(mlm, undertrained_margin=0.5).weight_settings() == mlm.weight_settings()


@pytest.mark.parametrize(("cls", "section"), SECTIONS)
def test_the_loop_takes_the_run_keys_and_names_the_section(cls, section) -> None:
    config = cls(checkpoint_every=6, log_every=3, grad_clip=0.25, on_bad_checkpoint="restart")
    loop = LoopSettings.of_run(config, 30, **RUN, eval_every=10, patience=2)
    assert (loop.steps, loop.checkpoint_every, loop.log_every, loop.grad_clip) == (30, 6, 3, 0.25)
    assert (loop.eval_every, loop.patience, loop.on_bad_checkpoint) == (10, 2, "restart")
    assert loop.compile_key == f"{section}.compile"
    assert f"{section}.on_bad_checkpoint: restart" in loop.restart_hint


def test_nmt_logs_and_checkpoints_at_every_evaluation_unless_told() -> None:
    loop = LoopSettings.of_run(TrainConfig(eval_every=250), 1000, **RUN, eval_every=250)
    assert (loop.log_every, loop.checkpoint_every) == (250, 250)
    loop = LoopSettings.of_run(
        TrainConfig(eval_every=250, log_every=50), 1000, **RUN, eval_every=250
    )
    assert (loop.log_every, loop.checkpoint_every) == (50, 250)


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.norm = torch.nn.LayerNorm(2)
        self.frozen = torch.nn.Parameter(torch.ones(2, 2), requires_grad=False)


def test_the_optimizer_decays_weight_matrices_only() -> None:
    torch.manual_seed(0)
    model = _Tiny()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    lr, decay = 0.1, 0.5
    optimizer, _ = build_optimizer(model, lr, decay, steps=10, warmup_steps=0)
    assert sum(len(group["params"]) for group in optimizer.param_groups) == 4  # not frozen
    for param in model.parameters():
        if param.requires_grad:
            param.grad = torch.zeros_like(param)
    optimizer.step()
    # a zero gradient leaves Adam's step at 0: only the decoupled decay moves a weight,
    # p <- p (1 - lr * weight_decay), and only a matrix's
    after = dict(model.named_parameters())
    torch.testing.assert_close(after["linear.weight"], before["linear.weight"] * (1 - lr * decay))
    for name in ("linear.bias", "norm.weight", "norm.bias", "frozen"):
        torch.testing.assert_close(after[name], before[name])


def _rates(schedule: str, steps: int, warmup_steps: int, updates: int) -> list[float]:
    """The learning rate in force at each of the first ``updates`` updates (lr 1)."""
    model = torch.nn.Linear(2, 2)
    optimizer, scheduler = build_optimizer(
        model, 1.0, 0.0, steps=steps, warmup_steps=warmup_steps, schedule=schedule
    )
    rates = []
    for _ in range(updates):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return rates


def test_the_linear_schedule_warms_up_then_reaches_zero_at_the_last_step() -> None:
    # by hand: step / 4 during the 4 warm-up steps, then (10 - step) / (10 - 4)
    expected = [0, 0.25, 0.5, 0.75, 1, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6, 0]
    assert _rates("linear", 10, 4, 11) == pytest.approx(expected)
    # a warm-up longer than the run is cut to the run: step / 10, never decaying
    assert _rates("linear", 10, 40, 10) == pytest.approx([step / 10 for step in range(10)])


def test_the_inverse_sqrt_schedule_falls_as_one_over_the_root_of_the_step() -> None:
    rates = _rates("inverse_sqrt", 10, 4, 17)
    assert rates[2] == pytest.approx(0.5)  # half-way up the warm-up
    assert rates[4] == pytest.approx(1.0)
    assert rates[16] == pytest.approx(0.5)  # 4 × warm-up: 1/√4, past the run's 10 steps
    # its warm-up is not cut to the run (an NMT run may stop before it ends)
    assert _rates("inverse_sqrt", 2, 4, 3)[2] == pytest.approx(0.5)


def test_the_optimizer_is_fused_on_cuda_only_and_knows_its_schedules() -> None:
    model = torch.nn.Linear(2, 2)
    optimizer, _ = build_optimizer(
        model, 0.1, 0.0, steps=5, warmup_steps=1, device=torch.device("cpu")
    )
    assert not optimizer.defaults.get("fused")
    with pytest.raises(ValueError, match="unknown schedule 'cosine'"):
        build_optimizer(model, 0.1, 0.0, steps=5, warmup_steps=1, schedule="cosine")
