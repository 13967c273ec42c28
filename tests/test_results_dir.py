"""Where a study's results may go: scratch storage (absolute paths, symbolic links) is fine;
the root, the home, the project, its own folders, files and foreign folders are refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from workflow_support import copy_project, project_env, snakemake

from tokstudy.errors import TokstudyError
from tokstudy.workflow.results_dir import MARKER, mark_results_dir
from tokstudy.workflow.study.core import Study

STUDY = {"languages": {"en": {"chatterbot": "english"}}, "tokenizers": {"char": {}}}


def _study(project: Path, results_dir: str) -> Study:
    return Study({**STUDY, "metrics": ["mu"], "results_dir": results_dir}, project)


def _refusal(project: Path, results_dir: str) -> str:
    with pytest.raises(TokstudyError) as error:
        _study(project, results_dir)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"config key results_dir: {results_dir!r} ")
    return message.removeprefix(f"config key results_dir: {results_dir!r} ")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with its own folders, under a home folder of its own."""
    home = tmp_path / "home"
    root = home / "clone"
    for name in ("src", "workflow", "config", "tests", "docs", ".git"):
        (root / name).mkdir(parents=True)
    (root / "README.md").write_text("a file\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    return root


@pytest.mark.parametrize(
    ("results_dir", "problem"),
    [
        ("/", "is the filesystem root"),
        (".", "is the project directory"),
        ("results/..", "is the project directory"),
        ("..", "is your home directory"),
        ("../..", "contains the project directory"),
        ("src", "would write into the project's 'src' folder"),
        ("workflow/out", "would write into the project's 'workflow' folder"),
        ("config", "would write into the project's 'config' folder"),
        ("tests/x", "would write into the project's 'tests' folder"),
        ("docs", "would write into the project's 'docs' folder"),
        (".git/x", "would write into the project's '.git' folder"),
        (".hidden", "would write into the project's '.hidden' folder"),
        ("README.md", "is a file"),
        ("README.md/x", "would write under the file"),
    ],
)
def test_each_wrong_place_is_refused_with_one_line(
    project: Path, results_dir: str, problem: str
) -> None:
    assert _refusal(project, results_dir).startswith(problem)


def test_the_home_directory_is_refused_by_its_absolute_path(project: Path) -> None:
    assert _refusal(project, str(project.parent)).startswith("is your home directory")


def test_a_folder_with_other_files_is_refused(project: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "papers"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("\\documentclass{book}\n", encoding="utf-8")
    assert _refusal(project, str(foreign)).startswith(
        f"is a folder with other files in it ({foreign}), not a tokstudy results folder"
    )
    (foreign / "corpora").mkdir()  # a results folder name beside other files: still foreign
    assert "not a tokstudy results folder" in _refusal(project, str(foreign))


def test_a_symbolic_link_into_the_project_sources_is_refused(project: Path) -> None:
    (project / "results").symlink_to(project / "src")
    assert _refusal(project, "results").startswith("would write into the project's 'src'")


def test_a_symbolic_link_to_a_foreign_folder_is_refused(project: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    (project / "results").symlink_to(foreign)
    assert "not a tokstudy results folder" in _refusal(project, "results")


def test_an_absolute_results_dir_elsewhere_is_accepted(project: Path, tmp_path: Path) -> None:
    results = tmp_path / "scratch" / "user" / "study"
    study = _study(project, str(results))
    assert study.results_dir == str(results)
    assert study.out("corpora/{language}/train.txt", language="en") == (
        f"{results}/corpora/en/train.txt"
    )


def test_results_and_their_parents_may_be_symbolic_links_elsewhere(
    project: Path, tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    (scratch / "study").mkdir(parents=True)
    (project / "results").symlink_to(scratch / "study")
    (project / "scratch").symlink_to(scratch)
    assert _study(project, "results").results_dir == "results"
    assert _study(project, "scratch/other").results_dir == "scratch/other"


def test_a_marked_folder_and_a_folder_of_an_earlier_run_are_accepted(
    project: Path, tmp_path: Path
) -> None:
    marked = tmp_path / "marked"
    mark_results_dir(str(marked))
    assert (marked / MARKER).is_file()
    (marked / "notes.txt").write_text("mine\n", encoding="utf-8")
    mark_results_dir(str(marked))  # a second run into it
    _study(project, str(marked))
    earlier = tmp_path / "earlier"  # written before the marker existed
    for name in ("corpora", "logs", "tokenizers"):
        (earlier / name).mkdir(parents=True)
    _study(project, str(earlier))
    (tmp_path / "empty").mkdir()
    _study(project, str(tmp_path / "empty"))
    # `results` holding other studies' folders (`results_dir: results/hft2022`, then the
    # default `results`): marked, or from before the marker
    shared = tmp_path / "shared"
    mark_results_dir(str(shared / "hft2022"))
    (shared / "vocabularies" / "logs").mkdir(parents=True)
    _study(project, str(shared))
    (shared / "vocabularies" / "draft.txt").write_text("mine\n", encoding="utf-8")
    assert "not a tokstudy results folder" in _refusal(project, str(shared))


def _in_read_only_folder(
    folder: Path, command: list[str], cwd: Path
) -> subprocess.CompletedProcess:
    """Run ``command`` with ``folder`` read-only: its permissions for a normal user; for root
    (whom permissions do not stop) a read-only bind mount in a private mount namespace."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if shutil.which("unshare") is None:
        pytest.skip("running as root without `unshare`: no read-only folder can be made")
    script = (
        f'mount --bind "{folder}" "{folder}" && mount -o remount,ro,bind "{folder}" "{folder}" '
        '&& exec "$@"'
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_read_only_results_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    code = (
        "from tokstudy.workflow.results_dir import mark_results_dir; "
        f"mark_results_dir({str(folder)!r})"
    )
    result = _in_read_only_folder(folder, [sys.executable, "-c", code], tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"tokstudy.errors.TokstudyError: results_dir {str(folder)!r}: ")
    assert f"cannot write into {folder} (" in last
    assert not (folder / MARKER).exists()


# --- the workflow ------------------------------------------------------------------------


def _config(path: Path, results_dir: str) -> Path:
    config = {**STUDY, "metrics": ["mu"], "corpus_defaults": {"heldout": 2}}
    path.write_text(yaml.safe_dump({**config, "results_dir": results_dir}), encoding="utf-8")
    return path


@pytest.mark.slow
def test_absolute_results_dir_dry_run_writes_nothing_and_a_run_marks_it(tmp_path: Path) -> None:
    results = tmp_path / "scratch" / "study"
    config = _config(tmp_path / "study.yaml", str(results))
    target = str(results / "corpora/en/train.txt")
    dry = snakemake(tmp_path / "work", "-n", target, config=config)
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert not results.exists()
    for _ in range(2):  # the second run goes into the marked folder
        run = snakemake(tmp_path / "work", "--cores", "1", "-f", target, config=config)
        assert run.returncode == 0, run.stderr[-2000:]
    assert (results / MARKER).is_file() and Path(target).stat().st_size > 1000
    (results / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert snakemake(tmp_path / "work", "-n", "-f", target, config=config).returncode == 0


@pytest.mark.slow
def test_a_foreign_folder_and_a_read_only_one_stop_the_workflow_at_start(tmp_path: Path) -> None:
    foreign = tmp_path / "papers"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("text\n", encoding="utf-8")
    refused = snakemake(tmp_path, "-n", config=_config(tmp_path / "f.yaml", str(foreign)))
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Traceback" not in output
    lines = [line for line in output.splitlines() if "config error: " in line]
    assert lines == [
        f"config error: config key results_dir: {str(foreign)!r} is a folder with other files "
        f"in it ({foreign}), not a tokstudy results folder; use a new or empty folder, or one "
        "of an earlier tokstudy run (e.g. results/<study>)"
    ]
    archive = tmp_path / "archive"
    archive.mkdir()
    config = _config(tmp_path / "a.yaml", str(archive))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "1"]
    result = _in_read_only_folder(archive, [*command, "--configfile", str(config)], tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output
    line = f"results_dir {str(archive)!r}: cannot write into {archive} ("
    assert sum(line in text for text in output.splitlines()) == 1, output[-3000:]
    assert "Read-only file system" in output or "Permission denied" in output
    assert "rule prepare_corpus" not in output  # no job started


@pytest.mark.slow
def test_the_default_study_runs_into_a_linked_results_folder_on_other_storage(
    tmp_path: Path,
) -> None:
    # a fresh clone whose `results` is a link to scratch storage, the default config (97 jobs)
    clone = copy_project(tmp_path / "clone")
    scratch = tmp_path / "scratch" / "results"
    scratch.mkdir(parents=True)
    (clone / "results").symlink_to(scratch)
    env = project_env(clone)
    run = snakemake(clone, "--cores", "2", snakefile=clone / "Snakefile", env=env, timeout=3600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (scratch / MARKER).is_file()
    assert (scratch / "tables/metrics.csv").stat().st_size > 1000
    assert (scratch / "plots/cost.png").is_file()
    assert sorted(p.name for p in clone.iterdir() if p.name == "results") == ["results"]
    assert (clone / "results").is_symlink()
    again = snakemake(clone, "-n", snakefile=clone / "Snakefile", env=env)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
