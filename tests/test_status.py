"""``tokstudy status``: per stage the jobs done, running, failed and left of a run, read from
Snakemake's own run log and the study's lock, with each running job's last log line."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from tokstudy.cli import main
from tokstudy.workflow.status import read_run_log, rule_stages, stage_table, status_report
from tokstudy.workflow.study_lock import LOCK_FILE

#: a Snakemake 9 run log as it stands mid-run (lines as Snakemake writes them)
RUN_LOG = f"""Assuming unrestricted shared filesystem usage.

SNAKEMAKE
=========
  Date: 2026-11-28 15:17:20
  Snakemake version: 9.27.1
  Snakefile: {REPO}/Snakefile
  Base directory: {REPO}
  Run directory: {{work}}
  Working directory: {{work}}

Building DAG of jobs...
Job stats:
job                 count
----------------  -------
prepare_corpus          1
train_tokenizer         3
collect_metrics         1
study_page              1
all                     1
total                   7

Select jobs to execute...
[Sat Nov 28 15:17:27 2026]
localrule prepare_corpus:
    input: a.yml
    output: results/corpora/en/train.txt, results/corpora/en/heldout.txt
    log: results/logs/prepare_corpus/en.log
    jobid: 1
    wildcards: language=en
[Sat Nov 28 15:17:49 2026]
Finished jobid: 1 (Rule: prepare_corpus)
1 of 7 steps (14%) done
[Sat Nov 28 15:17:49 2026]
rule train_tokenizer:
    input: results/corpora/en/train.txt
    output: results/tokenizers/en/char/full (update), results/metrics/en/char/full.tsv
    log: results/logs/train_tokenizer/en/char/full.log
    jobid: 2
    wildcards: language=en, tokenizer=char, size=full
[Sat Nov 28 15:17:49 2026]
rule train_tokenizer:
    input: results/corpora/en/train.txt
    output: results/tokenizers/en/hf_bpe/250 (update), results/metrics/en/hf_bpe/250.tsv
    log: results/logs/train_tokenizer/en/hf_bpe/250.log
    jobid: 3
    wildcards: language=en, tokenizer=hf_bpe, size=250
[Sat Nov 28 15:17:55 2026]
Error in rule train_tokenizer:
    message: None
    jobid: 2
    input: results/corpora/en/train.txt
    output: results/tokenizers/en/char/full, results/metrics/en/char/full.tsv
    log: results/logs/train_tokenizer/en/char/full.log (check log file(s) for error details)
"""
PROGRESS = "2026-11-28 15:17:58 INFO tokstudy.metrics.compute: scoring heldout.txt:  40% 8/20"


def study_folder(tmp_path: Path, pid: int) -> Path:
    """A results folder mid-run: the run's Snakemake log, the lock of ``pid`` and the
    running job's log ending on a progress line."""
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    log = tmp_path / ".snakemake" / "log" / "2026-11-28T151720.845343.snakemake.log"
    log.write_text(RUN_LOG.format(work=tmp_path), encoding="utf-8")
    results = tmp_path / "results"
    job_log = results / "logs" / "train_tokenizer" / "en" / "hf_bpe" / "250.log"
    job_log.parent.mkdir(parents=True)
    job_log.write_text(f"2026-11-28 15:17:50 INFO x: started\n{PROGRESS}\n\n", encoding="utf-8")
    owner = {"host": socket.gethostname(), "pid": pid, "cwd": str(tmp_path)}
    (results / LOCK_FILE).write_text(json.dumps(owner), encoding="utf-8")
    return results


def test_the_run_log_gives_planned_started_finished_and_failed_jobs(tmp_path: Path) -> None:
    results = study_folder(tmp_path, os.getpid())
    run = read_run_log(next((tmp_path / ".snakemake" / "log").iterdir()))
    assert run.planned["train_tokenizer"] == 3 and sum(run.planned.values()) == 7
    assert run.finished == {"1"} and set(run.failed) == {"2"}
    assert [job.name for job in run.open_jobs()] == [
        "train_tokenizer (language=en, tokenizer=hf_bpe, size=250)"
    ]
    assert run.started["2"].log == "results/logs/train_tokenizer/en/char/full.log"
    assert run.failed["2"].log == "results/logs/train_tokenizer/en/char/full.log"
    assert run.started["3"].outputs[0] == "results/tokenizers/en/hf_bpe/250"
    assert run.steps == "1 of 7 steps (14%) done" and run.writes_into(results)
    assert not run.writes_into(tmp_path / "other")
    # per stage, in the Snakefile's order: the planned jobs less those done, running, failed
    assert stage_table(run, alive=True) == [
        ("corpora", 1, 0, 0, 0),
        ("tokenizers", 0, 1, 1, 1),
        ("metrics", 0, 0, 0, 1),
        ("report", 0, 0, 0, 1),
        ("targets", 0, 0, 0, 1),
    ]


def test_status_of_a_live_run_shows_each_running_jobs_last_line(tmp_path: Path) -> None:
    results = study_folder(tmp_path, os.getpid())
    report = status_report(results)  # the lock names the run's working directory
    lines = report.splitlines()
    assert lines[0].startswith(f"{results}: a run is in progress: 1 of 7 steps (14%) done")
    assert "tokenizers      0        1       1      1" in report
    at = lines.index("running:")
    assert lines[at + 1].split() == [
        "train_tokenizer", "(language=en,", "tokenizer=hf_bpe,", "size=250)", "log",
        "results/logs/train_tokenizer/en/hf_bpe/250.log",
    ]  # fmt: skip
    assert lines[at + 2].strip() == PROGRESS
    assert "failed: train_tokenizer (language=en, tokenizer=char, size=full)" in report


def test_status_of_a_run_that_died_lists_its_open_jobs_as_interrupted(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    results = study_folder(tmp_path, gone.pid)
    report = status_report(results)
    assert "no run in progress; the last one: 1 of 7 steps (14%) done" in report
    assert "tokenizers      0        0       1      2" in report  # the open job is left
    assert "interrupted (started, never finished):" in report and PROGRESS not in report


def test_status_errors_name_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["status", str(tmp_path / "none")]) == 1
    assert "none: no such results folder" in capsys.readouterr().err
    (tmp_path / "results").mkdir()
    assert main(["status", str(tmp_path / "results"), "--directory", str(tmp_path)]) == 1
    assert "no Snakemake run log in" in capsys.readouterr().err


def test_every_rule_has_a_stage() -> None:
    stages = rule_stages(REPO)
    rule_files = sorted((REPO / "workflow" / "rules").rglob("*.smk"))
    assert set(stages.values()) == {
        p.relative_to(REPO / "workflow" / "rules").with_suffix("").as_posix()
        for p in rule_files
        if re.search(r"^rule \w+:", p.read_text(encoding="utf-8"), re.M)
    }
    assert (
        stages["train_tokenizer"] == "tokenizers"
        and stages["tokenization_parity_pud"] == "analyses/parity"
    )
