"""Compare two results folders of one config, leaving out what is measured, not computed.

    python scripts/compare_results.py before/results after/results

A refactoring must leave a study's outputs as they were. Two runs differ anyway in what
they measure and in what records the code: timings and throughput (``benchmarks/``,
``logs/``, ``costs/``, the cost table and plot, ``seconds``/``tokens_per_s``/... in JSON
and training logs) and the ``code`` record (step and fingerprint) of ``stats.json`` and
``meta.json``. This script drops those and prints every other file that differs or exists
on one side only, one per line; it exits 1 if there is any. A file that embeds a measured
figure in a way it cannot drop (the study page, a plot of the metrics) is listed too: read
the list, do not just count it.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

#: folders and files that hold only measurements
MEASURED_PARTS = {"benchmarks", "logs", "costs", "checkpoints"}
MEASURED_FILES = {".tokstudy-results", "cost.csv", "cost.md", "cost.png", "cost.pdf"}
#: keys of JSON files and columns of training logs that hold measurements or code records
MEASURED_KEYS = {
    "code",
    "seconds",
    "wall_seconds",
    "cpu_seconds",
    "compile_seconds",
    "max_rss_mb",
    "tokens_per_s",
    "flops_per_s",
    "mfu",
    "elapsed",
    "elapsed_s",
    "step_ms",
}


def _without_measurements(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _without_measurements(item)
            for key, item in value.items()
            if key not in MEASURED_KEYS
        }
    if isinstance(value, list):
        return [_without_measurements(item) for item in value]
    return value


def comparable(path: Path) -> Any:
    """The content of a file with its measurements left out (bytes where it has none)."""
    if path.suffix == ".json":
        return _without_measurements(json.loads(path.read_text(encoding="utf-8")))
    if path.name == "train_log.csv":
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
        return [{k: v for k, v in row.items() if k not in MEASURED_KEYS} for row in rows]
    return path.read_bytes()


def is_measured(relative: Path) -> bool:
    return bool(MEASURED_PARTS & set(relative.parts)) or relative.name in MEASURED_FILES


def differing(before: Path, after: Path) -> list[str]:
    """``relative path: why`` for every file that differs, outside the measurements."""
    files = {
        path.relative_to(root)
        for root in (before, after)
        for path in root.rglob("*")
        if path.is_file()
    }
    found = []
    for relative in sorted(files):
        if is_measured(relative):
            continue
        old, new = before / relative, after / relative
        if not old.exists() or not new.exists():
            found.append(f"{relative}: only in {'after' if new.exists() else 'before'}")
        elif comparable(old) != comparable(new):
            found.append(f"{relative}: differs")
    return found


def main() -> None:
    """Print the files that differ; exit 1 if any does."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    found = differing(args.before, args.after)
    print("\n".join(found) if found else "no difference outside the measurements")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
