"""The kill-point matrix of one training task, run by ``tests/test_kill_points.py``.

``python kill_points.py <task> <folder>`` (task ``clm``, ``mlm`` or ``nmt``) writes
``<folder>/matrix.json``. It runs the workflow's own steps (training, then scoring) on
stand-ins of Snakemake's ``snakemake`` object, each job in a process forked from this one,
which imports the libraries once and runs no torch itself (forks are then safe and quick).
Around the jobs it does what Snakemake does: a run's ``onstart`` and ``onsuccess`` /
``onerror`` hooks (:mod:`tokstudy.workflow.training_state`), and the deletion of a failed
job's declared outputs.

First an uninterrupted run: training, then scoring. Then, for each kill point and signal
(SIGKILL, SIGTERM), a fresh results folder: a first run whose job sends itself the signal
at that point, then a second run (``--rerun-incomplete``) that completes. Each case
records whether the killed job died of the signal, the steps the second run trained and
the step it resumed at, and whether its model files, training log (timing columns aside)
and scores equal the uninterrupted run's, and whether ``checkpoints/`` is empty after.
"""

from __future__ import annotations

import csv
import filecmp
import functools
import json
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import transformers.modeling_utils
from snakemake.iocontainers import Namedlist

from tokstudy.models.clm import scoring as clm_scoring
from tokstudy.models.clm.train import SUMMARY_FILE as CLM_SUMMARY
from tokstudy.models.pretrain import SUMMARY_FILE as MLM_SUMMARY
from tokstudy.nmt import runs as nmt_runs
from tokstudy.nmt.config import SplitConfig
from tokstudy.nmt.data import split_corpus
from tokstudy.nmt.train import SUMMARY_FILE as NMT_SUMMARY
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.training.core import LOG_FILE, TrainingRun
from tokstudy.training.run_state import MODEL_DIR
from tokstudy.workflow import training_state
from tokstudy.workflow.code_fingerprint import code_fingerprint
from tokstudy.workflow.dispatch import run_named_step

POINTS = (
    "before_first_checkpoint",
    "after_first_checkpoint",
    "while_writing_model",
    "after_summary",
    "during_scoring",
)
#: what the pre-tokenization rule runs
PRETOKENIZE = "tokstudy.models.family:pretokenize_text"
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM}
TIMING = {"tokens_per_s", "flops_per_s", "mfu", "elapsed_s"}
CHECKPOINT_EVERY = 3

WORDS = ["ab", "ba", "abc", "cab", "bca", "aa", "bb", "cc", "abba", "baab", "acca"]


def _lines(count: int, seed: int) -> list[str]:
    """Lines of a few made-up words (a tiny corpus any tokenizer learns in no time)."""
    return [
        " ".join(WORDS[(seed + 7 * i + 3 * j) % len(WORDS)] for j in range(3 + (i + seed) % 5))
        for i in range(count)
    ]


def _write(path: Path, lines: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@functools.cache
def _code(step: str) -> str:
    """The step's code fingerprint (found once, before the forks, by :func:`main`)."""
    return code_fingerprint(step)


def job(log: Path, step: str, **fields: Any) -> SimpleNamespace:
    """A stand-in for Snakemake's ``snakemake`` object of the rule running ``step``."""
    params = {**fields.pop("params", {}), "step": step, "code": _code(step)}
    containers = {
        name: Namedlist(fromdict=value) if isinstance(value, dict) else Namedlist(value)
        for name, value in {"wildcards": {}, **fields, "params": params}.items()
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    return SimpleNamespace(threads=1, log=Namedlist([str(log)]), **containers)


class Task:
    """One training task: its inputs, its training and scoring jobs, its files."""

    train_step = score_step = summary = ""
    score_outputs: tuple[str, ...] = ()

    def __init__(self, inputs: Path) -> None:
        self.inputs = inputs

    def prepare(self) -> None:
        """Write the inputs (in a child process)."""
        raise NotImplementedError

    def train_job(self, results: Path) -> SimpleNamespace:
        raise NotImplementedError

    def score_job(self, results: Path) -> SimpleNamespace:
        raise NotImplementedError

    def run_dir(self, results: Path) -> Path:
        return results / "run"

    def scores(self, results: Path) -> list[Path]:
        return [results / "scores" / name for name in self.score_outputs]

    def kill_while_scoring(self, kill: Callable[[], None]) -> None:
        """Patch the scoring so that it calls ``kill`` in the middle."""
        raise NotImplementedError


class Clm(Task):
    train_step = "tokstudy.models.clm.train:train_clm"
    score_step = "tokstudy.models.clm.scoring:score_clm"
    summary = CLM_SUMMARY
    score_outputs = ("scores.json",)
    config: ClassVar[dict[str, Any]] = {
        "context": 16,
        "batch_size": 4,
        "epochs": 2,
        "validation_lines": 10,
        "checkpoint_every": CHECKPOINT_EVERY,
        "log_every": 1,
        "eval_every": 4,
        "device": "cpu",
        "lr": 0.01,
        "heldout_max_lines": 20,
    }

    def prepare(self) -> None:
        train = _write(self.inputs / "train.txt", _lines(60, 0))
        _write(self.inputs / "heldout.txt", _lines(12, 5))
        train_to_directory(
            "hf_wordpiece", Path(train), TrainSpec(vocab_size=24, threads=1), self.inputs / "tok"
        )
        run_named_step(
            job(
                self.inputs / "pretokenize.log",
                PRETOKENIZE,
                input={"tokenizer_dir": str(self.inputs / "tok"), "train": train},
                output={"out_dir": str(self.inputs / "corpus")},
                params={"whole_word_mask": False},
            )
        )

    def train_job(self, results: Path) -> SimpleNamespace:
        return job(
            results / "logs" / "train.log",
            self.train_step,
            input={
                "tokenizer_dir": str(self.inputs / "tok"),
                "corpus_dir": str(self.inputs / "corpus"),
                "train_text": str(self.inputs / "train.txt"),
            },
            output={"out_dir": str(self.run_dir(results))},
            params={"config": self.config, "checkpoints": str(results / "checkpoints/r/run")},
        )

    def score_job(self, results: Path) -> SimpleNamespace:
        return job(
            results / "logs" / "score.log",
            self.score_step,
            input={
                "trained": str(self.run_dir(results)),
                "tokenizer_dir": str(self.inputs / "tok"),
                "corpus_dir": str(self.inputs / "corpus"),
                "heldout": str(self.inputs / "heldout.txt"),
            },
            output={"out_tsv": str(self.scores(results)[0])},
            params={
                "config": self.config,
                "model_dir": str(self.run_dir(results) / MODEL_DIR),
                "noise_levels": [20],
                "noise_seed": 0,
                "noise_word_fraction": 0.2,
            },
        )

    def kill_while_scoring(self, kill: Callable[[], None]) -> None:
        original = clm_scoring.token_nll
        calls = []

        def token_nll(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            if len(calls) == 2:  # the clean text scored, the noised text next
                kill()
            return original(*args, **kwargs)

        clm_scoring.token_nll = token_nll


class Mlm(Clm):
    train_step = "tokstudy.models.family:pretrain"
    score_step = "tokstudy.models.tasks:evaluate_mlm"
    summary = MLM_SUMMARY
    score_outputs = ("metrics.json", "edits.tsv")
    config: ClassVar[dict[str, Any]] = {
        "steps": 8,
        "batch_size": 4,
        "max_length": 16,
        "warmup_steps": 2,
        "lr": 2e-3,
        "log_every": 1,
        "checkpoint_every": CHECKPOINT_EVERY,
        "device": "cpu",
    }

    def train_job(self, results: Path) -> SimpleNamespace:
        return job(
            results / "logs" / "train.log",
            self.train_step,
            input={
                "tokenizer_dir": str(self.inputs / "tok"),
                "corpus_dir": str(self.inputs / "corpus"),
            },
            output={"out_dir": str(self.run_dir(results))},
            params={"config": self.config, "checkpoints": str(results / "checkpoints/r/run")},
        )

    def score_job(self, results: Path) -> SimpleNamespace:
        metrics, edits = self.scores(results)
        return job(
            results / "logs" / "score.log",
            self.score_step,
            input={
                "tokenizer_dir": str(self.inputs / "tok"),
                "pretrained": str(self.run_dir(results)),
                "heldout": str(self.inputs / "heldout.txt"),
            },
            output={"out_tsv": str(metrics), "edits_tsv": str(edits)},
            params={
                "config": {"max_lines": 12, "batch_size": 4, "noise_levels": [20], "device": "cpu"},
                "model_dir": str(self.run_dir(results) / MODEL_DIR),
            },
        )

    def kill_while_scoring(self, kill: Callable[[], None]) -> None:
        from tokstudy.models import mlm_scoring

        original = mlm_scoring.score_lines
        calls = []

        def score_lines(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            if len(calls) == 2:  # the clean text scored, the noised text next
                kill()
            return original(*args, **kwargs)

        mlm_scoring.score_lines = score_lines


class Nmt(Task):
    train_step = "tokstudy.nmt.runs:train"
    score_step = "tokstudy.nmt.runs:translate_split"
    summary = NMT_SUMMARY
    score_outputs = ("test.hyp",)
    config: ClassVar[dict[str, Any]] = {
        "max_steps": 8,
        "eval_every": CHECKPOINT_EVERY,
        "warmup_steps": 2,
        "lr": 2e-3,
        "max_tokens": 96,
        "max_length": 24,
        "patience": 10,
        "device": "cpu",
    }

    def prepare(self) -> None:
        source = _lines(90, 0)
        target = [" ".join(reversed(line.split())).replace("a", "o") for line in source]
        split = self.inputs / "split"
        split_corpus(
            [
                Path(_write(self.inputs / "raw.xa", source)),
                Path(_write(self.inputs / "raw.xb", target)),
            ],
            ("xa", "xb"),
            split,
            SplitConfig(dev_size=6, test_size=6, seed=0),
        )
        for side, lines in (("xa", source), ("xb", target)):
            text = _write(self.inputs / f"text.{side}", lines)
            spec = TrainSpec(vocab_size=24, threads=1)
            train_to_directory("hf_wordpiece", Path(text), spec, self.inputs / f"tok.{side}")

    def _inputs(self) -> dict[str, str]:
        summary = self.inputs / "split" / "split.json"
        return {
            "split": str(summary),
            "source_tokenizer_dir": str(self.inputs / "tok.xa"),
            "target_tokenizer_dir": str(self.inputs / "tok.xb"),
        }

    def train_job(self, results: Path) -> SimpleNamespace:
        return job(
            results / "logs" / "train.log",
            self.train_step,
            input=self._inputs(),
            output={"out_dir": str(self.run_dir(results))},
            params={
                "config": self.config,
                "checkpoints": str(results / "checkpoints/r/run"),
                "split_dir": str(self.inputs / "split"),
            },
            wildcards={"direction": "xa-xb"},
        )

    def score_job(self, results: Path) -> SimpleNamespace:
        return job(
            results / "logs" / "score.log",
            self.score_step,
            input={"run_dir": str(self.run_dir(results)), **self._inputs()},
            output={"out_path": str(self.scores(results)[0])},
            params={
                "config": {"beam_size": 2, "device": "cpu", "max_length_b": 8},
                "split_dir": str(self.inputs / "split"),
            },
            wildcards={"direction": "xa-xb"},
        )

    def kill_while_scoring(self, kill: Callable[[], None]) -> None:
        original = nmt_runs.translate

        def translate(*args: Any, **kwargs: Any) -> Any:
            kill()
            return original(*args, **kwargs)

        nmt_runs.translate = translate


TASKS = {"clm": Clm, "mlm": Mlm, "nmt": Nmt}


def in_child(work: Callable[[], None]) -> int:
    """Run ``work`` in a forked process; its wait status (a signal, or exit status 0/1)."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            import torch

            torch.set_num_threads(1)
            work()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return os.waitpid(pid, 0)[1]


def _kill(sig: int) -> Callable[[], None]:
    return lambda: os.kill(os.getpid(), sig)


def _arm(task: Task, point: str, sig: int) -> None:
    """Patch the training code (in the child) so that the job sends itself ``sig`` at
    ``point``; ``after_summary`` and ``during_scoring`` are armed by :func:`_case`."""
    kill = _kill(sig)
    step, checkpoint = TrainingRun.step, TrainingRun.checkpoint
    counts = {"steps": 0, "checkpoints": 0}

    def counted_step(self: TrainingRun) -> None:
        step(self)
        counts["steps"] += 1
        if point == "before_first_checkpoint" and counts["steps"] == CHECKPOINT_EVERY - 1:
            kill()
        if point == "after_first_checkpoint" and counts["steps"] == CHECKPOINT_EVERY + 2:
            kill()

    def counted_checkpoint(self: TrainingRun, *args: Any, **kwargs: Any) -> None:
        checkpoint(self, *args, **kwargs)
        counts["checkpoints"] += 1

    TrainingRun.step = counted_step
    TrainingRun.checkpoint = counted_checkpoint
    if point == "while_writing_model":
        save_file = transformers.modeling_utils.safe_save_file

        def half_saved(*args: Any, **kwargs: Any) -> Any:
            kill()  # config.json written, the weights not yet
            return save_file(*args, **kwargs)

        transformers.modeling_utils.safe_save_file = half_saved


def _counting(record: Path) -> None:
    """Count the optimizer steps of this job into ``record`` (in the child)."""
    step = TrainingRun.step

    def counted(self: TrainingRun) -> None:
        step(self)
        record.write_text(str(int(record.read_text()) + 1) if record.exists() else "1")

    TrainingRun.step = counted


def _train(task: Task, results: Path) -> None:
    run_named_step(task.train_job(results))


def _score(task: Task, results: Path) -> None:
    run_named_step(task.score_job(results))


def _snakemake_run(results: Path, jobs: list[tuple[Callable[[], None], list[Path]]]) -> list[int]:
    """One Snakemake run of ``jobs`` (work, declared outputs) in order: the hooks around
    them, a failed job's outputs deleted and the run stopped there; the wait statuses."""
    training_state.remember(results)
    statuses = []
    for work, outputs in jobs:
        status = in_child(work)
        statuses.append(status)
        if status != 0:
            for path in outputs:
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(
                    missing_ok=True
                )
            break
    training_state.drop_recorded(results)  # onsuccess, or onerror
    return statuses


def _log_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(handle)]


def _same_tree(a: Path, b: Path) -> bool:
    """Whether two folders hold the same files, byte for byte."""
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all(filecmp.cmp(a / name, b / name, shallow=False) for name in names)


def _case(task: Task, folder: Path, point: str, sig: int) -> dict[str, Any]:
    results = folder / "results"
    run_dir = task.run_dir(results)
    train_outputs, score_outputs = [run_dir], task.scores(results)

    def killed_training() -> None:
        _arm(task, point, sig)
        _train(task, results)
        if point == "after_summary":  # everything written, the job not yet recorded
            _kill(sig)()

    def killed_scoring() -> None:
        task.kill_while_scoring(_kill(sig))
        _score(task, results)

    counter = folder / "steps_run"

    def counted(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            _counting(counter)
            work()

        return run

    if point == "during_scoring":
        first = _snakemake_run(
            results,
            [
                (counted(lambda: _train(task, results)), train_outputs),
                (killed_scoring, score_outputs),
            ],
        )
        counter.unlink(missing_ok=True)
        second = _snakemake_run(results, [(lambda: _score(task, results), score_outputs)])
    else:
        first = _snakemake_run(
            results,
            [(killed_training, train_outputs), (lambda: _score(task, results), score_outputs)],
        )
        second = _snakemake_run(
            results,
            [
                (counted(lambda: _train(task, results)), train_outputs),
                (lambda: _score(task, results), score_outputs),
            ],
        )
    train_log = (results / "logs" / "train.log").read_text(encoding="utf-8")
    return {
        "first": first,
        "second": second,
        "steps_run": int(counter.read_text()) if counter.exists() else 0,
        "resumed_at": _resumed_at(train_log),
        "restored": "its outputs restored" in train_log,
        "run_dir": str(run_dir),
        "scores": [str(path) for path in score_outputs],
        "left_in_checkpoints": sorted(
            str(p.relative_to(results)) for p in (results / "checkpoints").rglob("*") if p.is_file()
        ),
    }


def _resumed_at(log: str) -> int:
    for line in log.splitlines():
        if "resuming from" in line and " at step " in line:
            return int(line.rsplit(" at step ", 1)[1].split()[0])
    return 0


def main(name: str, folder: Path) -> None:
    task = TASKS[name](folder / "inputs")
    for step in (
        task.train_step,
        task.score_step,
        PRETOKENIZE,
    ):
        _code(step)
    assert in_child(task.prepare) == 0, "preparing the inputs failed"
    reference = folder / "uninterrupted" / "results"
    counter = folder / "uninterrupted" / "steps_run"

    def straight() -> None:
        _counting(counter)
        _train(task, reference)

    statuses = _snakemake_run(
        reference,
        [
            (straight, [task.run_dir(reference)]),
            (lambda: _score(task, reference), task.scores(reference)),
        ],
    )
    assert statuses == [0, 0], f"the uninterrupted run failed: {statuses}"
    total = int(counter.read_text())
    matrix: dict[str, Any] = {"total_steps": total, "cases": {}}
    for point in POINTS:
        for sig_name, sig in SIGNALS.items():
            case = folder / f"{point}-{sig_name}"
            found = _case(task, case, point, sig)
            run_dir, ref_dir = Path(found["run_dir"]), task.run_dir(reference)
            found["killed_by"] = (
                signal.Signals(found["first"][-1] & 0x7F).name
                if os.WIFSIGNALED(found["first"][-1])
                else None
            )
            found["model_equal"] = _same_tree(run_dir / "model", ref_dir / "model")
            found["log_equal"] = _log_rows(run_dir / LOG_FILE) == _log_rows(ref_dir / LOG_FILE)
            found["scores_equal"] = all(
                filecmp.cmp(mine, theirs, shallow=False)
                for mine, theirs in zip(
                    [Path(p) for p in found["scores"]], task.scores(reference), strict=True
                )
            )
            found["summary_written"] = (run_dir / task.summary).is_file()
            matrix["cases"][f"{point}-{sig_name}"] = found
    (folder / "matrix.json").write_text(json.dumps(matrix, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
