"""Snakemake's job selection, greedy against ILP, on a DAG shaped like a large study.

Writes a throw-away workflow into a temporary folder: ``--languages`` corpus jobs, then
``languages × 5 tokenizers × 7 sizes`` independent cell jobs (each copies its corpus, with
a log, a benchmark file and declared resources, as the study's cells have), then one job
that collects them. The jobs do almost nothing, so the wall time is Snakemake's own: it
runs the workflow from scratch with ``--scheduler ilp`` and ``--scheduler greedy``,
alternating, and prints wall and CPU seconds (Snakemake and its children) per run and the
median ratio. ``profiles/default`` of this repository selects greedily.

    python scripts/bench_scheduler.py --languages 18 --repeats 1
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
LANGUAGES = [f"l{{i}}" for i in range({languages})]
SIZES = [500, 750, 1500, 3000, 4000, 6000, 8000]
CELLS = dict(language=LANGUAGES, tokenizer=list("abcde"), size=SIZES)

rule all:
    input: "table.txt"

rule corpus:
    output: "corpora/{{language}}.txt"
    log: "logs/corpus/{{language}}.log"
    resources: mem_mb=1000, runtime=10
    shell: "echo text > {{output}}"

rule cell:
    input: "corpora/{{language}}.txt"
    output: "cells/{{language}}/{{tokenizer}}/{{size}}.tsv"
    log: "logs/cell/{{language}}/{{tokenizer}}/{{size}}.log"
    benchmark: "benchmarks/cell/{{language}}/{{tokenizer}}/{{size}}.tsv"
    resources: mem_mb=2000, runtime=30
    shell: "cp {{input}} {{output}}"

rule collect:
    input: expand("cells/{{language}}/{{tokenizer}}/{{size}}.tsv", **CELLS)
    output: "table.txt"
    log: "logs/collect.log"
    shell: "cat {{input}} > {{output}}"
"""


def run(folder: Path, scheduler: str, cores: int) -> tuple[float, float]:
    """Wall and CPU seconds of one run from scratch with ``scheduler``."""
    subprocess.run(["rm", "-rf", "cells", "corpora", "logs", "benchmarks", "table.txt",
                    ".snakemake"], cwd=folder, check=True)  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--quiet", "all",
               "--scheduler", scheduler, "--workflow-profile", "none"]  # fmt: skip
    subprocess.run(command, cwd=folder, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    """Time both schedulers, alternating, and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", type=int, default=18)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokstudy-scheduler-") as tmp:
        folder = Path(tmp)
        (folder / "Snakefile").write_text(SNAKEFILE.format(languages=args.languages))
        figures: dict[str, list[tuple[float, float]]] = {"ilp": [], "greedy": []}
        for _ in range(args.repeats):
            for scheduler in figures:
                figures[scheduler].append(run(folder, scheduler, args.cores))
    jobs = args.languages * (1 + 5 * 7) + 2
    print(f"{jobs} jobs, --cores {args.cores}")
    for scheduler, runs in figures.items():
        walls = ", ".join(f"{wall:.1f}" for wall, _ in runs)
        cpus = ", ".join(f"{cpu:.1f}" for _, cpu in runs)
        print(f"{scheduler:>6}: wall s {walls}; CPU s {cpus}")
    ratio = statistics.median(
        ilp[0] / greedy[0] for ilp, greedy in zip(figures["ilp"], figures["greedy"], strict=True)
    )
    print(f"wall ilp/greedy (median of pairs): {ratio:.2f}")


if __name__ == "__main__":
    main()
