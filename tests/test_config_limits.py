"""Config limits (issue 40): ``~`` in results_dir, the largest vocabulary size, and schema
messages of bounded size whatever the input (a YAML alias bomb included)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tokstudy.cli import main
from tokstudy.errors import TokstudyError
from tokstudy.workflow.config_files import (
    MAX_MESSAGE,
    check_schema,
    expanded_size,
    load_config_file,
)
from tokstudy.workflow.study.core import Study

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_config_file(ROOT / "workflow" / "schemas" / "config.schema.yaml")
BASE = load_config_file(ROOT / "config" / "config.yaml")


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """YAML whose ``metrics`` expands to ``width ** levels`` strings through aliases."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join([*lines, f"metrics: *l{levels - 1}", ""])


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_an_alias_bomb_in_metrics_is_one_line_not_an_exhausted_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb(), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tokstudy.cli",
            "check-config",
            str(ROOT / "config/config.yaml"),
            str(bomb),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
        check=False,
    )
    err = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(err) == 1, done.stderr[-2000:]
    assert f"config file {bomb}: more than 100000 values" in err[0]


def test_expanded_size_counts_every_use_of_an_alias() -> None:
    shared = ["a", "b"]
    assert expanded_size({"x": [shared, shared]}, "c") == 1 + 1 + 1 + 2 * 3  # brute force
    with pytest.raises(TokstudyError, match="c: more than 10 values"):
        expanded_size([[shared] * 4], "c", limit=10)
    looped: list = []
    looped.append(looped)
    with pytest.raises(TokstudyError, match="contains itself"):
        expanded_size(looped, "c")


def test_a_schema_message_stays_short_whatever_the_value() -> None:
    config = {**BASE, "metrics": [["x" * 50_000] * 20]}
    with pytest.raises(TokstudyError) as error:
        check_schema(config, SCHEMA)
    message = str(error.value)
    assert message.startswith("config key metrics.0:") and len(message) <= MAX_MESSAGE
    assert "\n" not in message


@pytest.mark.parametrize("key", ["vocab_sizes"])
def test_a_vocabulary_size_over_the_maximum_is_one_line(tmp_path: Path, capsys, key) -> None:
    extra = tmp_path / "huge.yaml"
    extra.write_text(f"{key}: [1000, 1000000000000]\n", encoding="utf-8")
    assert main(["check-config", str(ROOT / "config/config.yaml"), str(extra)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "config key vocab_sizes.1:" in err[0]
    assert "is greater than the maximum of 10000000" in err[0]
    check_schema({**BASE, key: [10_000_000]}, SCHEMA)  # the maximum itself passes


def test_results_dir_tilde_is_the_home(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    study = Study({**BASE, "results_dir": "~/res"}, project)
    assert study.results_dir == str(home / "res")
    assert study.out("tables/metrics.csv") == f"{home}/res/tables/metrics.csv"
    with pytest.raises(TokstudyError, match="is your home directory"):
        Study({**BASE, "results_dir": "~"}, project)
