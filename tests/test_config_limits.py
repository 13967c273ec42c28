"""Config limits (issue 40): ``~`` in results_dir, the largest vocabulary size, and schema
messages of bounded size whatever the input (a YAML alias bomb included)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.cli import parse_config
from workflow_support import snakemake

from tokstudy.cli import main
from tokstudy.errors import TokstudyError
from tokstudy.workflow.config_files import (
    MAX_MESSAGE,
    check_schema,
    expanded_size,
    load_config_file,
    typed_overrides,
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


@pytest.mark.parametrize(
    "text",
    [
        "{seeds: [0, 1], languages: [en, fi], clm: {lr: 0.001, compile: false, scale: null}}",
        "[300, 1000]",
        "{en: {path: /data/en.txt.gz, max_lines: 1_000}, fi: {heldout: 0.05}}",
    ],
)
def test_nested_config_overrides_are_read_as_a_study_file_reads_them(text: str) -> None:
    # Snakemake's own parser of --config, then the same text as a study file would give it
    assert typed_overrides(parse_config([f"key={text}"])) == {"key": yaml.safe_load(text)}


def test_overrides_keep_top_level_values_keys_and_texts_yaml_would_turn_into_other_things() -> None:
    parsed = parse_config(["seed=7", "results_dir=/tmp/007", "note={on: 2026-11-29, 10: '[a]'}"])
    typed = typed_overrides(parsed)
    assert typed["seed"] == 7 and typed["results_dir"] == "/tmp/007"
    assert typed["note"] == {"on": "2026-11-29", "10": "[a]"}  # no date, no list, keys as given


def test_a_nested_number_given_with_config_plans_the_study(tmp_path: Path) -> None:
    arguments = ["-n", "--cores", "1", "--config", "vocab_sizes=[300]", "results_dir=results"]
    result = snakemake(tmp_path, *arguments, config=ROOT / "config" / "config.yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "size=300" in result.stdout and "size=250" not in result.stdout  # [250, 380] replaced
