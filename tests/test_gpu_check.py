"""scripts/gpu_check.py and scripts/gpu_profile.py: one line and status 2 without a CUDA GPU;
their rows at toy sizes."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import torch
import yaml
from conftest import REPO


def test_without_a_gpu_the_check_says_so_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "gpu_check: no CUDA GPU visible (torch.cuda.is_available() is false); "
        "run it on a machine with one NVIDIA GPU"
    ]


@pytest.mark.slow
def test_the_speed_table_trains_every_kind_by_default_through_the_loop() -> None:
    """--smoke: the same rows at toy sizes on the CPU, where the default is eager (so no
    second, eager row)."""
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--smoke", "--steps", "2"],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ")[:2] for line in result.stdout.splitlines() if line[:2] == "| "]
    assert rows[1:] == [
        [f"| {kind}", "default: eager"]
        for kind in ("clm tiny, 64 x 4", "BERT tiny MLM, 32 x 4", "NMT tiny, 512-token batches")
    ]
    assert "failed" not in result.stdout


def test_the_study_names_the_wheels_it_lacks(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    gpu_check = _load_script()
    monkeypatch.setattr(gpu_check.importlib.util, "find_spec", lambda name: None)
    assert gpu_check.run_study(REPO, cores=1, smoke=True) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("gpu_check: the study needs babel, conllu, jsonschema, morfessor")
    assert "pip download --only-binary=:all:" in line and "--no-index --find-links" in line


def test_the_study_config_points_every_shared_path_at_the_given_folder(tmp_path: Path) -> None:
    config = _load_script().study_config(tmp_path, tmp_path / "out", smoke=False)
    text = json.dumps(config)
    assert "../shared" not in text and config["results_dir"] == str(tmp_path / "out")
    assert config["data_root"] == str(tmp_path / "corpora" / "hft2022")
    assert config["models"]["ud_root"] == str(tmp_path / "ud")
    assert config["nmt"]["corpus"]["files"][0] == str(tmp_path / "corpora/hft2022/en.txt.gz")


def test_the_study_config_lies_in_its_marked_results_folder(tmp_path: Path) -> None:
    """Nothing beside it: results/ stays a folder the other studies may write into."""
    from tokstudy.workflow.results_dir import is_results_folder, results_dir_problem

    results = tmp_path / "results" / "gpu_check_20261127_215451"
    config_file = _load_script().write_study_config(tmp_path, results, smoke=True)
    assert config_file.parent == results
    assert yaml.safe_load(config_file.read_text())["results_dir"] == str(results)
    assert is_results_folder(tmp_path / "results")
    for results_dir in ("results", f"results/{results.name}", "results/predictive"):
        assert results_dir_problem(results_dir, tmp_path) is None, results_dir


@pytest.mark.parametrize("compile_all", [False, True])
def test_each_kind_has_its_default_row_and_the_other_mode_where_there_is_one(
    compile_all: bool, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Eager beside a default that compiles; compiled beside an eager default only with
    --compile-all; beside a failed default row, eager."""
    gpu_check = _load_script()
    compiled_by_default = {"clm_kind": True, "mlm_kind": False, "nmt_kind": False}

    def fake_row(kind, sizes, compile_loss, steps, note=""):
        if kind.__name__ == "nmt_kind" and compile_loss is None:
            raise RuntimeError("out of memory")
        compiled = compiled_by_default[kind.__name__] if compile_loss is None else compile_loss
        return f"| {kind.__name__} | {compile_loss} |", bool(compiled)

    monkeypatch.setattr(gpu_check, "speed_row", fake_row)
    gpu_check.speed_table(gpu_check.SMOKE_SIZES, 2, compile_all)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith(" |")][1:]
    extra = ["| mlm_kind | True |"] if compile_all else []
    assert rows == [
        "| clm_kind | None |",
        "| clm_kind | False |",
        "| mlm_kind | None |",
        *extra,
        "| nmt_kind | compile=None | failed: RuntimeError('out of memory') |",
        "| nmt_kind | False |",
    ]


def test_variants_add_their_rows_after_the_chosen_kinds(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    gpu_check = _load_script()
    calls = []

    def fake_row(kind, sizes, compile_loss, steps, note=""):
        calls.append((kind.__name__, sizes, compile_loss, steps, note))
        return f"| {kind.__name__} | {compile_loss} |", False

    monkeypatch.setattr(gpu_check, "speed_row", fake_row)
    base = gpu_check.SMOKE_SIZES
    gpu_check.speed_table(base, 2, False, [gpu_check.nmt_kind, gpu_check.mlm_kind], True)
    assert "| *variants (`--variants`)* |" in capsys.readouterr().out
    changed = [(name, _changes(base, sizes), compiled) for name, sizes, compiled, *_ in calls]
    assert [note for *_, note in calls[:4]] == ["", "second run"] * 2
    assert [note for *_, note in calls[4:]] == [""] * 7 + ["100 steps"]  # the CUDA graphs
    assert [steps for *_, steps, _ in calls] == [2] * 11 + [100]
    assert changed == [
        ("nmt_kind", {}, None),
        ("nmt_kind", {}, None),
        ("mlm_kind", {}, None),
        ("mlm_kind", {}, None),
        ("mlm_kind", {"bert_attention_dropout": 0.0}, True),
        ("mlm_kind", {"bert_batch": 2 * base.bert_batch}, None),
        ("mlm_kind", {"bert_batch": 2 * base.bert_batch, "bert_attention_dropout": 0.0}, True),
        ("nmt_kind", {"nmt_pad_to_multiple": 8}, False),
        ("nmt_kind", {"nmt_pad_to_multiple": 8}, True),
        ("nmt_kind", {"nmt_tokens": 4 * base.nmt_tokens}, False),
        ("nmt_kind", {"nmt_tokens": 4 * base.nmt_tokens}, True),
        ("nmt_kind", {"nmt_pad_to_multiple": base.nmt_length // 8, "nmt_cuda_graphs": True}, True),
    ]


@pytest.mark.slow
def test_the_variants_train_with_their_settings() -> None:
    """The NMT variants at toy sizes: the padded and fixed-shape models' rows say so, and
    none fails."""
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--smoke", "--steps", "2",
         "--kinds", "nmt", "--variants"],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ")[:2] for line in result.stdout.splitlines() if line[:2] == "| "]
    assert rows[1:] == [
        ["| NMT tiny, 512-token batches", "default: eager"],
        ["| NMT tiny, 512-token batches", "default: eager, second run"],
        ["| *variants (`--variants`)*", "|"],
        ["| NMT tiny, 512-token batches, padded to x8", "eager"],
        ["| NMT tiny, 512-token batches, padded to x8", "loss compiled"],
        ["| NMT tiny, 2048-token batches", "eager"],
        ["| NMT tiny, 2048-token batches", "loss compiled"],
        [
            "| NMT tiny, 512-token batches, padded to x4, fixed shapes (CUDA graphs)",
            "loss compiled, 100 steps",
        ],
    ]


@pytest.mark.parametrize(("name", "pad_to"), [("clm", 1), ("mlm", 1), ("nmt", 1), ("nmt", 8)])
def test_no_training_step_makes_the_host_wait_for_the_device(name: str, pad_to: int) -> None:
    """Issue 36: no host-device synchronisation in the step. Each kind's micro-batch, from
    the host's batch to the backward pass, runs no operator that reads a device tensor's
    contents back (the log steps read the summed loss; the optimizer on the CPU is not
    the fused CUDA one, so it is left out). One exception, in eager NMT: transformers'
    Marian decoder makes an all-ones mask and reads it back to choose SDPA's causal
    kernel (none under ``torch.compile``); an explicit mask would give that kernel up."""
    operators = _load_script("step_operators")
    torch.manual_seed(0)
    sizes = dataclasses.replace(operators.gpu_check.SMOKE_SIZES, nmt_pad_to_multiple=pad_to)
    _, model, task, _, _ = operators.gpu_check.KIND_NAMES[name](sizes, False, 2)
    task.start(0)
    masks = []
    for step in range(3):
        batch, forward, backward = operators.record_step(task, model, step)
        masks.append("attention_mask" in batch)
        waits = forward.waits + backward.waits
        others = [op for op, callers in waits if "create_causal_mask" not in callers]
        assert others == []
        assert len(waits) == (name == "nmt")
    assert all(masks) == (pad_to > 1)  # NMT's padded sources are masked, others need none


def test_the_recorder_counts_each_operator_and_the_waits_for_the_device() -> None:
    operators = _load_script("step_operators")
    x = torch.arange(4.0)
    with operators.StepOperators() as recorder:
        total = (x * 2).sum()
        float(total)  # one read of a tensor's value
        _ = x[x > 1]  # boolean-mask indexing
    assert recorder.counts["aten.mul.Tensor"] == 1 and recorder.counts["aten.sum.default"] == 1
    assert [op for op, _ in recorder.waits] == [
        "aten._local_scalar_dense.default",
        "aten.index.Tensor",
    ]
    assert (
        "test_the_recorder_counts_each_operator_and_the_waits_for_the_device"
        in (recorder.waits[0][1])
    )


def test_the_operator_table_has_a_row_per_kind(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    operators = _load_script("step_operators")
    monkeypatch.setattr(sys, "argv", ["step_operators.py", "--kinds", "nmt,clm"])
    assert operators.main() == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [row[0] for row in rows] == ["| NMT tiny, 512-token batches", "| clm tiny, 64 x 4"]
    assert all(int(row[1]) > 100 and int(row[2]) > int(row[1]) for row in rows)
    assert rows[0][3] == "1 (1 in create_causal_mask) |" and rows[1][3] == "0 |"
    _assert_refuses_gpt(
        operators.main, ["step_operators.py", "--kinds", "gpt"], monkeypatch, capsys
    )


@pytest.mark.slow
def test_each_row_compiles_afresh_not_as_a_recompilation_of_the_last() -> None:
    """A second compiled row of another batch size: without a fresh start torch would
    recompile the first row's graph after a failed size guard, with dynamic sizes (the
    H200's clm 1024 x 64 row of 2026-11-28: 28 % against 36.5 %)."""
    from torch._dynamo.utils import guard_failures

    gpu_check = _load_script()
    guard_failures.clear()
    for batch in (2, 4):
        sizes = dataclasses.replace(gpu_check.SMOKE_SIZES, clm_batch=batch, context=16)
        gpu_check.train_kind(gpu_check.clm_kind, sizes, True, 1, log_every=1)
    assert not any(guard_failures.values())


@pytest.mark.slow
def test_compiled_nmt_is_one_graph_for_every_batch_shape() -> None:
    """NMT's batches change shape every step: the loop compiles its loss once, with
    symbolic sizes, and never again (no recompilation, no graph break)."""
    from torch._dynamo.utils import counters

    gpu_check = _load_script()
    torch._dynamo.reset()
    counters.clear()
    sizes = dataclasses.replace(gpu_check.SMOKE_SIZES, nmt_tokens=1024)
    _, _, log = gpu_check.train_kind(gpu_check.nmt_kind, sizes, True, 4, log_every=4)
    assert log["step"].tolist() == [4]
    assert counters["stats"]["unique_graphs"] == 1 and not counters["recompiles"]


def test_kinds_picks_the_rows_and_an_unknown_kind_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    gpu_check = _load_script()
    picked = []
    monkeypatch.setattr(gpu_check, "speed_table", lambda *args: picked.append(args[3]))
    monkeypatch.setattr(sys, "argv", ["gpu_check.py", "--smoke", "--kinds", "nmt,mlm"])
    assert gpu_check.main() == 0
    assert picked == [[gpu_check.nmt_kind, gpu_check.mlm_kind]]
    arguments = ["gpu_check.py", "--smoke", "--kinds", "mlm,gpt"]
    _assert_refuses_gpt(gpu_check.main, arguments, monkeypatch, capsys)


@pytest.mark.slow
def test_the_profile_trains_the_kind_and_lists_its_operators() -> None:
    result = _run_profile("--smoke", "--kinds", "clm", "--batch-scale", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    heading = next(index for index, line in enumerate(lines) if line.startswith("### "))
    assert lines[heading].startswith("### clm tiny, 64 x 8, eager: ")  # the batch doubled
    assert lines[heading + 1].startswith("steps 9-14 (profiled: 11-14): ")
    assert "k tokens/s" in lines[heading + 1] and lines[heading + 1].endswith(" ms a step")
    assert "aten::mm" in result.stdout and "Self CPU time total" in result.stdout


@pytest.mark.slow
def test_the_profile_of_a_variant_trains_it_with_its_settings() -> None:
    """--variants 3: BERT with twice the rows (the check's third variant), not the kinds."""
    result = _run_profile("--smoke", "--variants", "3")
    assert result.returncode == 0, result.stderr
    headings = [line for line in result.stdout.splitlines() if line.startswith("### ")]
    assert len(headings) == 1 and headings[0].startswith("### BERT tiny MLM, 32 x 8, eager: ")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((), "gpu_profile: no CUDA GPU visible (torch.cuda.is_available() is false); "),
        (("--smoke", "--kinds", "gpt"), "--kinds: unknown gpt (known: clm, mlm, nmt)"),
        (("--smoke", "--batch-scale", "0"), "--batch-scale: 0 is not a positive whole number"),
        (("--smoke", "--variants", "2,10"), "--variants: '10' is not a variant number (1 to 9)"),
        (("--smoke", "--variants", "x"), "--variants: 'x' is not a variant number (1 to 9)"),
    ],
)
def test_the_profile_refuses_in_one_line(arguments: tuple[str, ...], message: str) -> None:
    result = _run_profile(*arguments)
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr.splitlines()[-1]


def _assert_refuses_gpt(main, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``main`` run with ``argv`` stops with status 2 and one line naming the unknown kind."""
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith("--kinds: unknown gpt (known: clm, mlm, nmt)")
    )


def _changes(base, sizes) -> dict:
    """The fields of ``sizes`` that differ from ``base``."""
    names = [item.name for item in fields(sizes)]
    return {
        name: getattr(sizes, name) for name in names if getattr(sizes, name) != getattr(base, name)
    }


def _run_profile(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_profile.py"), *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )


def _load_script(name: str = "gpu_check"):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_batch_shapes_script_counts_shapes_and_padding() -> None:
    """scripts/nmt_batch_shapes.py at toy sizes: the fixed shapes of ``cuda_graphs`` take at
    most their 8 widths, and the shares of sentence tokens agree with a count by hand of the
    same batches."""
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "nmt_batch_shapes.py"), "--smoke", "--steps", "20"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == [
        "| token budget",
        "| padded to x8",
        "| fixed shapes (cuda_graphs), x4",
    ]
    assert 1 <= int(rows[3][1]) <= 8
    gpu_check = _load_script()
    sizes = dataclasses.replace(
        gpu_check.SMOKE_SIZES, nmt_preset="tiny", nmt_pad_to_multiple=4, nmt_cuda_graphs=True
    )
    _, _, task, _, _ = gpu_check.nmt_kind(sizes, None, 20)
    task.start(0)
    real = padded = 0
    for step in range(20):
        batch, _ = task.batch(step)
        real += int(batch["attention_mask"][batch["labels"][:, 0] != -100].sum())
        real += int((batch["labels"] != -100).sum())
        padded += 2 * batch["labels"].numel()
    assert rows[3][2] == f"{100 * real / padded:.1f} %"
