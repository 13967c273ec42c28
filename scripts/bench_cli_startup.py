"""Benchmark: how long the command line takes to answer ``--help``, and ``import tokstudy``.

Each command runs ``--repeats`` times (default 7) in a fresh Python process, with
``PYTHONPATH`` set to ``--src`` (default: this checkout's ``src``), so an older checkout's
code can be timed beside this one; prints the median and the slowest wall time of each, and
the modules of pandas, torch and numpy the process imported.

    python scripts/bench_cli_startup.py [--src PATH/src] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "torch", "numpy")
COMMANDS = {
    "tokstudy --help": ["-m", "tokstudy.cli", "--help"],
    "tokstudy metrics --help": ["-m", "tokstudy.cli", "metrics", "--help"],
    "tokstudy correlate --help": ["-m", "tokstudy.cli", "correlate", "--help"],
    "import tokstudy": ["-c", "import tokstudy"],
}


def heavy_imports(arguments: list[str], env: dict[str, str]) -> list[str]:
    """The heavy libraries a command imports (run once under ``-X importtime``)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments], env=env, capture_output=True, text=True
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()}
    return [name for name in HEAVY if name in modules]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the src folder to time")
    parser.add_argument("--repeats", type=int, default=7, help="runs of each command")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {args.src}")
    for name, arguments in COMMANDS.items():
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            subprocess.run([sys.executable, *arguments], env=env, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
        heavy = ", ".join(heavy_imports(arguments, env)) or "none"
        print(
            f"{name:28s} median {statistics.median(times):5.2f} s, slowest {max(times):5.2f} s"
            f" (imports {heavy})"
        )


if __name__ == "__main__":
    main()
