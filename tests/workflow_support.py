"""Running the repository's Snakemake workflow from tests (shared by the end-to-end tests)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO, SHARED, write_lines


def snakemake(
    workdir: Path,
    *args: str,
    config: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    snakefile: Path = REPO / "Snakefile",
) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's workflow (or ``snakefile``) in ``workdir`` (``env``
    replaces the environment; ``timeout`` raises :class:`subprocess.TimeoutExpired`)."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(snakefile),
        "--directory",
        str(workdir),
    ]
    if config is not None:
        command += ["--configfile", str(config)]
    environment = {**(os.environ if env is None else env), "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        check=False,
    )


#: what a copy of the project leaves out: outputs, caches and the environment
_NOT_COPIED = (".git", ".snakemake", ".venv", "results", "__pycache__", "*_cache", "*.egg-info")


def copy_project(destination: Path) -> Path:
    """A copy of the project (its Snakefile, workflow, config and ``src``) at ``destination``,
    as a fresh clone has it; run it with ``snakemake(..., snakefile=destination /
    "Snakefile")`` and, for its own ``src``, ``env=project_env(destination)``."""
    shutil.copytree(REPO, destination, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    return destination


def project_env(project: Path) -> dict[str, str]:
    """The environment that makes Snakemake and its jobs import ``project``'s own tokstudy."""
    return {**os.environ, "PYTHONPATH": str(project / "src")}


def tiny_config(workdir: Path, english_lines: list[str], **changes: object) -> Path:
    """A study of three languages: a local file, a package corpus and a data_root file."""
    write_lines(workdir / "data" / "en.txt", english_lines[:800]) if (workdir / "data").mkdir(
        parents=True, exist_ok=True
    ) is None else None
    config = {
        "seed": 5,
        "data_root": str(SHARED / "corpora" / "hft2022"),
        "corpus_defaults": {"heldout": 0.1, "max_lines": 600},
        "languages": {
            "en": {"path": str(workdir / "data" / "en.txt")},
            "bn": {"chatterbot": "bengali"},
            "mr": {},
        },
        "vocab_sizes": [250, 380],
        "tokenizers": {"sp_bpe": {}, "hf_unigram": {}, "char": {}},
        "metrics": ["f95", "mu", "nu", "fertility", "unk_rate"],
        "plots": {"frequency_vocab_size": 380, "skip_top_ranks": 100},
    }
    config.update(changes)
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def planned_jobs(result: subprocess.CompletedProcess) -> set[tuple[str, str]]:
    """(rule, wildcards) of every job a dry run lists."""
    jobs = set()
    for block in re.split(r"\n(?=rule \w+:)", result.stdout):
        rule = re.match(r"rule (\w+):", block)
        wildcards = re.search(r"\n\s+wildcards: (.*)", block)
        if rule:
            jobs.add((rule.group(1), wildcards.group(1) if wildcards else ""))
    return jobs
