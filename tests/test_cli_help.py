"""The command line's help: every flag of every command says what it does, and answering
``--help`` imports none of the heavy libraries the commands use (it stays fast:
``scripts/bench_cli_startup.py``)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from conftest import REPO

from tokstudy.cli import _parser


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_flag_of_every_command_has_help() -> None:
    found = commands()
    assert {"metrics", "check-config", "serve", "correlate", "status"} <= set(found)
    silent = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for name, command in found.items()
        for action in command._actions
        if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()
    ]
    assert silent == []


@pytest.mark.parametrize("argv", [["--help"], ["metrics", "--help"], ["correlate", "--help"]])
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    code = (
        "import sys\nfrom tokstudy.cli import main\ntry:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\n"
        "heavy = ('pandas', 'torch', 'snakemake', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert "usage: tokstudy" in run.stdout
    assert run.stdout.strip().splitlines()[-1] == "[]"
