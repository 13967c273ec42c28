"""``tokstudy status``: where a run of a study stands, per stage: jobs done, running, failed
and left, and the last line of each running job's log (its progress line).

Everything comes from what Snakemake itself records: the run's own log
(``.snakemake/log/<start>.snakemake.log`` in the run's working directory: the jobs it
planned per rule, each job it started with its log file and wildcards, each it finished or
lost, and ``N of M steps done``), and the study's lock (:mod:`tokstudy.workflow.study_lock`:
whether the run is still alive). A rule's stage is the rule file that defines it
(``workflow/rules/<stage>.smk``; an analysis ``analyses/<name>``). Reading files only, it
answers at once, also while the run holds the results folder.
"""

from __future__ import annotations

import re
import socket
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tokstudy.errors import TokstudyError
from tokstudy.workflow.study_lock import LOCK_FILE, pid_alive, read_owner

#: where Snakemake keeps the log of each run, under the run's working directory
SNAKEMAKE_LOGS = Path(".snakemake") / "log"
_RULE = re.compile(r"^(?:local)?rule (\w+):$")
_FINISHED = re.compile(r"^Finished jobid: (\d+)|^Finished job (\d+)\.")
_ERROR = re.compile(r"^Error in rule (\w+):$")
_STEPS = re.compile(r"^\d+ of \d+ steps \(.*\) done$")
_HEADER = re.compile(r"^  (Working directory|Base directory): (.+)$")
#: the stage of the Snakefile's own rules (``all``, ``analysis_outputs``)
TARGETS_STAGE = "targets"


@dataclass
class Job:
    """One job of a run, as Snakemake's log states it."""

    jobid: str
    rule: str
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str | None:
        """The job's log file (the first, without Snakemake's remark after it)."""
        text = self.fields.get("log")
        return text.split(",")[0].split(" (")[0].strip() if text else None

    @property
    def outputs(self) -> list[str]:
        """The job's output files (flags such as ``(update)`` dropped)."""
        text = self.fields.get("output", "")
        return [part.split(" (")[0].strip() for part in text.split(", ") if part.strip()]

    @property
    def name(self) -> str:
        """``rule (wildcards)``: how the report names the job."""
        wildcards = self.fields.get("wildcards")
        return f"{self.rule} ({wildcards})" if wildcards else self.rule


@dataclass
class RunLog:
    """What a run's Snakemake log says: jobs planned per rule, started, finished, failed."""

    path: Path
    working_directory: Path
    base_directory: Path | None
    planned: Counter[str]
    started: dict[str, Job]
    finished: set[str]
    failed: dict[str, Job]
    steps: str | None

    def open_jobs(self) -> list[Job]:
        """Jobs started and neither finished nor failed, in the order they started."""
        return [
            job
            for jobid, job in self.started.items()
            if jobid not in self.finished and jobid not in self.failed
        ]

    def writes_into(self, results_dir: Path) -> bool:
        """Whether the run's jobs write into ``results_dir``."""
        target = results_dir.resolve()
        outputs = (
            (self.working_directory / output).resolve()
            for job in self.started.values()
            for output in job.outputs
        )
        return any(path.is_relative_to(target) for path in outputs)


def read_run_log(path: Path) -> RunLog:
    """Parse one Snakemake run log (Snakemake 8 and 9 write the same lines)."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    headers: dict[str, str] = {}
    planned: Counter[str] = Counter()
    started: dict[str, Job] = {}
    failed: dict[str, Job] = {}
    finished: set[str] = set()
    steps = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if header := _HEADER.match(line):
            headers[header.group(1)] = header.group(2).strip()
        elif line.startswith("Job stats:") and not planned:
            index = _job_stats(lines, index, planned)
        elif block := _RULE.match(line) or _ERROR.match(line):
            fields, index = _fields(lines, index)
            jobid = fields.get("jobid", "")
            if block.re is _ERROR:  # the error's lines add to the job's (its wildcards)
                failed[jobid] = Job(
                    jobid, block.group(1), started.get(jobid, Job("", "")).fields | fields
                )
            else:
                started[jobid] = Job(jobid, block.group(1), fields)
        elif done := _FINISHED.match(line):
            finished.add(done.group(1) or done.group(2))
        elif _STEPS.match(line):
            steps = line
    working = Path(headers.get("Working directory", Path(path).resolve().parents[2]))
    base = headers.get("Base directory")
    return RunLog(
        Path(path), working, Path(base) if base else None, planned, started, finished, failed, steps
    )


def _job_stats(lines: list[str], index: int, planned: Counter[str]) -> int:
    """Read the ``Job stats`` table that starts at ``index`` into ``planned``."""
    while index < len(lines) and lines[index].strip():
        parts = lines[index].split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            planned[parts[0]] = int(parts[1])
        index += 1
    return index


def _fields(lines: list[str], index: int) -> tuple[dict[str, str], int]:
    """The ``    key: value`` lines of a job block from ``index``, and where it ends."""
    fields = {}
    while index < len(lines) and lines[index].startswith("    "):
        key, _, value = lines[index].strip().partition(": ")
        fields[key] = value
        index += 1
    return fields, index


def rule_stages(base_directory: Path) -> dict[str, str]:
    """Rule name → stage, in the order the Snakefile includes the rule files: the rule file
    that defines it (``corpora``, ``analyses/parity``); the Snakefile's own rules are
    :data:`TARGETS_STAGE`."""
    base = Path(base_directory)
    snakefile = base / "Snakefile"
    included = re.findall(r'^include:\s*"([^"]+)"', snakefile.read_text(encoding="utf-8"), re.M)
    rules = base / "workflow" / "rules"
    stages = {}
    for path in [base / name for name in included if name.endswith(".smk")]:
        stage = path.relative_to(rules).with_suffix("").as_posix()
        for name in re.findall(r"^\s*rule (\w+):", path.read_text(encoding="utf-8"), re.M):
            stages[name] = stage
    return stages


def last_line(path: Path, tail: int = 8192) -> str:
    """The last non-empty line of a text file (its last ``tail`` bytes are read); empty
    when it has none or cannot be read."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(handle.tell() - tail, 0))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def find_run_log(results_dir: Path, directory: Path) -> RunLog | None:
    """The newest Snakemake run log in ``directory`` whose jobs write into
    ``results_dir`` (``None`` when no run has written there from that directory)."""
    folder = Path(directory) / SNAKEMAKE_LOGS
    for path in sorted(folder.glob("*.snakemake.log"), reverse=True):
        run = read_run_log(path)
        if run.planned and run.writes_into(results_dir):
            return run
    return None


def run_state(results_dir: Path) -> tuple[str, Path | None]:
    """``running`` (the lock's owner is alive on this host), ``elsewhere`` (a lock of
    another host) or ``stopped``, and the working directory the lock names."""
    lock = Path(results_dir) / LOCK_FILE
    if not lock.is_file():
        return "stopped", None
    owner = read_owner(lock)
    where = Path(owner["cwd"]) if isinstance(owner.get("cwd"), str) else None
    if owner.get("host") != socket.gethostname():
        return "elsewhere", where
    alive = isinstance(owner.get("pid"), int) and pid_alive(owner["pid"])
    return ("running" if alive else "stopped"), where


def stage_table(run: RunLog, alive: bool) -> list[tuple[str, int, int, int, int]]:
    """Per stage, in the order of the rule files: ``(stage, done, running, failed, left)``
    jobs of the run (a job that was open when the run stopped counts as left)."""
    stages = rule_stages(run.base_directory) if run.base_directory else {}
    counts: dict[str, Counter[str]] = {}

    def add(rule: str, column: str, amount: int = 1) -> None:
        stage = stages.get(rule, TARGETS_STAGE)
        counts.setdefault(stage, Counter())[column] += amount

    for rule, count in run.planned.items():
        add(rule, "planned", count)
    for jobid in run.finished:
        if jobid in run.started:
            add(run.started[jobid].rule, "done")
    for job in run.failed.values():
        add(job.rule, "failed")
    if alive:
        for job in run.open_jobs():
            add(job.rule, "running")
    order = list(dict.fromkeys([*stages.values(), TARGETS_STAGE]))
    return [
        (
            stage,
            c["done"],
            c["running"],
            c["failed"],
            max(c["planned"] - c["done"] - c["running"] - c["failed"], 0),
        )
        for stage in sorted(counts, key=order.index)
        if (c := counts[stage])
    ]


def status_report(results_dir: Path, directory: Path | None = None) -> str:
    """The text ``tokstudy status`` prints for ``results_dir``; ``directory``: the working
    directory of the run (default: the one the lock names, else the current one)."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise TokstudyError(f"{results_dir}: no such results folder")
    state, locked_in = run_state(results_dir)
    where = Path(directory or locked_in or ".")
    run = find_run_log(results_dir, where)
    if run is None:
        raise TokstudyError(
            f"{results_dir}: no Snakemake run log in {where / SNAKEMAKE_LOGS} writes into it "
            "(give --directory, the folder snakemake ran in)"
        )
    alive = state == "running"
    said = {
        "running": "a run is in progress",
        "elsewhere": "a run on another host holds the folder (its jobs cannot be checked)",
        "stopped": "no run in progress; the last one",
    }[state]
    lines = [f"{results_dir}: {said}: {run.steps or 'no step done yet'} (log {run.path})"]
    table = stage_table(run, alive)
    width = max([len("stage"), *(len(row[0]) for row in table)])
    lines.append(f"{'stage':<{width}}  {'done':>5}  {'running':>7}  {'failed':>6}  {'left':>5}")
    for stage, done, running, failed, left in table:
        lines.append(f"{stage:<{width}}  {done:>5}  {running:>7}  {failed:>6}  {left:>5}")
    opened = run.open_jobs()
    if opened:
        lines.append("running:" if alive else "interrupted (started, never finished):")
    for job in opened:
        log = job.log
        lines.append(f"  {job.name}  log {log or '-'}")
        if alive and log:
            lines.append(f"    {last_line(run.working_directory / log) or '(log empty so far)'}")
    for job in run.failed.values():
        lines.append(f"failed: {job.name}  log {job.log or '-'}")
    return "\n".join(lines)
