"""Peak memory and wall time of single cell jobs: train_tokenizer, or compute_metrics.

Runs each job's function alone in a child process (one thread) on the prepared corpora of a
finished run of the study (found where the study's planners put them, under its
``results_dir``), and Snakemake itself (a dry run) for comparison, then prints one line per
job. A trained cell's job (rule ``train_tokenizer``) trains, saves and scores the tokenizer
in one process; a pretrained cell's (size ``pretrained``, rule ``compute_metrics``) scores
the imported tokenizer of that run. What a cluster job needs is about two Snakemake
processes (the executor's and the job step's) plus the step. Run it from the repository
root:

    python scripts/bench_job_resources.py --configfile config/hft2022.yaml \\
        my/sp_unigram/8000 my/hft/8000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.cells import PRETRAINED, Cell
from tokstudy.workflow.cell_job import CellOutputs, evaluate_job, train_and_evaluate
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

REPO = Path(__file__).resolve().parents[1]


def run_job(config: Path, job: Cell, scratch: Path) -> None:
    """The job's function, writing into ``scratch``: train and score a trained cell, or
    score a pretrained one."""
    study = Study(yaml.safe_load(config.read_text(encoding="utf-8")))
    plan = StudyPlan(study)
    corpora, tokenizers = plan.corpora, plan.tokenizers
    texts = {
        "train": Path(study.out(corpora.TRAIN, language=job.language)),
        "heldout": Path(study.out(corpora.HELDOUT, language=job.language)),
    }
    outputs = CellOutputs(
        scratch / "tokenizer",
        scratch / "metrics.tsv",
        scratch / "frequencies.tsv",
        scratch / "cost.json",
    )
    if job.size == PRETRAINED:
        tables = (outputs.metrics, outputs.frequencies)
        evaluate_job(Path(tokenizers.tokenizer_dir(job)), texts, *tables, job.language)
        return
    spec = TrainSpec(threads=1, **tokenizers.train_spec(job))
    train_and_evaluate(job.tokenizer, texts, spec, outputs)


def measure(command: list[str]) -> tuple[float, float]:
    """Peak RSS (MB) and wall time (s) of a child process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", type=Path, required=True)
    parser.add_argument("jobs", nargs="+", help="language/tokenizer/size")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one job, into a scratch folder
        run_job(args.configfile, Cell(*args.jobs[0].split("/")), Path(args.jobs[1]))
        return
    dry_run = [sys.executable, "-m", "snakemake", "-n", "-s", str(REPO / "Snakefile")]
    rss, wall = measure([*dry_run, "--configfile", str(args.configfile)])
    print(f"{'snakemake -n':40} peak {rss:7.0f} MB {wall:7.1f} s")
    for job in args.jobs:
        rule = "compute_metrics" if job.endswith(f"/{PRETRAINED}") else "train_tokenizer"
        with tempfile.TemporaryDirectory() as scratch:
            rss, wall = measure(
                [sys.executable, __file__, "--configfile", str(args.configfile),
                 "--child", job, scratch]
            )  # fmt: skip
        print(f"{rule + ' ' + job:40} peak {rss:7.0f} MB {wall:7.1f} s")


if __name__ == "__main__":
    main()
