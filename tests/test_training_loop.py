"""The shared training loop: FLOPs per token, the device peak table, the log's columns."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch
from transformers import LlamaConfig

from tokstudy.errors import TokstudyError
from tokstudy.models.clm.model import train_flops_per_token
from tokstudy.models.clm.train import ClmTask
from tokstudy.training import device as device_module
from tokstudy.training import loop as loop_module
from tokstudy.training.device import check_compile, peak_flops, peak_for_name, resolve_compile
from tokstudy.training.loop import LOOP_COLUMNS, LoopSettings, TrainingTask, compiled_loss, train
from tokstudy.training.optimizer import Optimization


def test_clm_flops_per_token_match_a_hand_count() -> None:
    config = LlamaConfig(
        vocab_size=10,
        hidden_size=4,
        intermediate_size=8,
        num_hidden_layers=2,
        num_attention_heads=1,
    )
    # per layer: Q, K, V, O (4 · 4 · 4 = 64) and gate, up, down (3 · 4 · 8 = 96) = 160;
    # 2 layers and the tied output head (10 · 4): 360 matmul parameters, 6 FLOPs each;
    # attention: 12 · 2 layers · context 5 · hidden 4 = 480
    assert train_flops_per_token(config, 5) == 6 * 360 + 480 == 2640


@pytest.mark.parametrize(
    ("name", "bf16", "peak"),
    [
        ("NVIDIA H100 80GB HBM3", True, 989e12),
        ("NVIDIA H100 PCIe", True, 756e12),
        ("NVIDIA H200", True, 989e12),
        ("NVIDIA A100-SXM4-80GB", False, 156e12),
        ("NVIDIA L4", True, 121e12),
        ("NVIDIA L40S", True, 362e12),  # not the L4's entry
        ("Tesla T4", True, None),
    ],
)
def test_the_peak_of_a_device_comes_from_its_name(name: str, bf16: bool, peak) -> None:
    assert peak_for_name(name, bf16) == peak


def test_the_cpu_has_no_peak() -> None:
    assert peak_flops(torch.device("cpu"), True) is None


class Regression(TrainingTask):
    """y = 3x on fixed random batches of 4 rows."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def batch(self, step: int):
        self.asked.append(step)
        x = torch.linspace(-1, 1, 4)[:, None] + step / 100
        return (x, 3 * x), 4

    def loss(self, model, batch):
        x, y = batch
        loss = torch.nn.functional.mse_loss(model(x), y)
        return loss, {"loss": loss.detach()}


def _train(out: Path, steps: int = 6, on_step=None) -> tuple[Regression, torch.nn.Module]:
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    settings = LoopSettings(
        steps=steps,
        log_every=2,
        checkpoint_every=2,
        grad_clip=1.0,
        out_dir=out,
        run_fingerprint="f",
        flops_per_token=10.0,
    )
    task = Regression()
    optimization = Optimization(optimizer, scheduler)
    train(model, optimization, task, settings, device=torch.device("cpu"), on_step=on_step)
    return task, model


def test_a_cpu_run_logs_throughput_flops_and_an_empty_mfu(tmp_path: Path) -> None:
    task, _ = _train(tmp_path)
    assert task.asked == list(range(6))  # each batch built once, in order
    log = pd.read_csv(tmp_path / "train_log.csv")
    assert list(log.columns) == ["step", "loss", *LOOP_COLUMNS]
    assert list(log["step"]) == [2, 4, 6]
    assert list(log["flops_per_s"]) == pytest.approx(list(10.0 * log["tokens_per_s"]))
    assert log["mfu"].isna().all()  # no known peak on the CPU
    assert log["loss"].iloc[-1] < log["loss"].iloc[0]


def test_a_killed_loop_resumes_to_the_same_weights(tmp_path: Path) -> None:
    _, whole = _train(tmp_path / "whole")

    def kill(step: int) -> None:
        if step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path / "killed", on_step=kill)
    task, resumed = _train(tmp_path / "killed")
    assert task.asked == [2, 3, 4, 5]  # from the checkpoint at step 2
    assert torch.equal(whole.weight, resumed.weight) and torch.equal(whole.bias, resumed.bias)


def test_compile_without_a_cpu_compiler_is_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no g++, c++ or clang++ on it
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(TokstudyError, match=r"^models\.clm\.compile: .*C\+\+ compiler"):
        check_compile(torch.device("cpu"), "models.clm.compile")


def test_compile_left_out_compiles_on_cuda_only(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []
    monkeypatch.setattr(device_module, "check_compile", lambda device, key: checked.append(key))
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert resolve_compile(None, cpu, "k") is False and checked == []
    assert resolve_compile(None, cuda, "k") is True and checked == ["k"]
    assert resolve_compile(False, cuda, "k") is False and checked == ["k"]
    assert resolve_compile(True, cpu, "k") is True and checked == ["k", "k"]
    assert resolve_compile(None, cuda, "k", on_cuda=False) is False and checked == ["k", "k"]


def test_the_tasks_compile_on_cuda_where_it_measured_faster() -> None:
    from tokstudy.models.pretrain import MlmTask
    from tokstudy.nmt.train import NmtTask

    assert (ClmTask.compile_on_cuda, MlmTask.compile_on_cuda, NmtTask.compile_on_cuda) == (
        True,
        False,
        False,
    )


@pytest.mark.parametrize(
    ("device", "variable_shapes", "cudnn_attention"),
    [("cuda", True, [False]), ("cuda", False, []), ("cpu", True, [])],
)
def test_variable_shapes_turn_cudnn_attention_off_on_cuda_only(
    monkeypatch: pytest.MonkeyPatch, device: str, variable_shapes: bool, cudnn_attention
) -> None:
    calls: list[bool] = []
    monkeypatch.setattr(torch.backends.cuda, "enable_cudnn_sdp", calls.append)
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        device_module.prepare_device(torch.device(device), variable_shapes)
        assert calls == cudnn_attention
        assert torch.backends.cuda.matmul.allow_tf32 is (device == "cuda")
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_compile_left_out_trains_eagerly_with_a_warning_where_torch_cannot_compile(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_triton(device: torch.device, key: str) -> None:
        raise TokstudyError(f"{key}: torch.compile on CUDA needs Triton, which is not installed")

    monkeypatch.setattr(device_module, "check_compile", no_triton)
    assert resolve_compile(None, torch.device("cuda"), "nmt.train.compile") is False
    assert "nmt.train.compile: torch.compile on CUDA needs Triton" in caplog.text
    with pytest.raises(TokstudyError, match=r"^nmt\.train\.compile: .*Triton"):
        resolve_compile(True, torch.device("cuda"), "nmt.train.compile")


def test_the_measured_matmul_rate_is_two_n_cubed_flops_per_product(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([10.0, 12.0])  # the timed products take 2 s in all
    monkeypatch.setattr(device_module.time, "perf_counter", lambda: next(clock))
    flops = device_module.matmul_flops.__wrapped__(torch.device("cpu"), torch.float32, 16, 5)
    assert flops == 2 * 16**3 * 5 / 2.0


@pytest.mark.parametrize(
    ("variable", "fixed", "device", "options", "graphs"),
    [
        (False, False, "cuda", {"dynamic": None, "mode": None}, False),
        (True, False, "cuda", {"dynamic": True, "mode": None}, False),
        (True, True, "cuda", {"dynamic": True, "mode": "reduce-overhead"}, True),
        (True, True, "cpu", {"dynamic": True, "mode": None}, False),  # no CUDA graphs on the CPU
    ],
)
def test_the_loss_compiles_for_its_shapes_and_replays_cuda_graphs_for_fixed_ones(
    monkeypatch: pytest.MonkeyPatch, variable: bool, fixed: bool, device: str, options, graphs
) -> None:
    calls: list[dict] = []
    monkeypatch.setattr(torch, "compile", lambda function, **kwargs: calls.append(kwargs))
    task = Regression()
    task.variable_shapes, task.fixed_shapes = variable, fixed
    assert compiled_loss(task, torch.device(device))[1] is graphs
    assert calls == [options]


def test_the_log_sums_keep_no_steps_own_output() -> None:
    """A CUDA graph's next replay overwrites its outputs in place: the sums must be new
    tensors (stood for here by writing into the step's output)."""
    sums: dict = {}
    output = torch.tensor(2.0)
    loop_module._sum(sums, {"loss": output, "rows": 3})
    output.fill_(100.0)
    loop_module._sum(sums, {"loss": torch.tensor(5.0), "rows": 4})
    assert sums == {"loss": torch.tensor(7.0), "rows": 7}
