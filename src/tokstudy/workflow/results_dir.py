"""The study's results folder: where it may be, and the marker that makes it tokstudy's.

``results_dir`` may be relative to the project (the working directory), absolute, or reach
another filesystem through symbolic links (``results -> /scratch/$USER/study``): cluster
scratch storage. Refused, each with one line: the filesystem root, the user's home, the
project itself or a folder that contains it, the project's own folders (``src``,
``workflow``, ``config``, ``tests``, dot folders…), a file, and an existing folder with
files in it that is not a tokstudy results folder. A results folder carries the marker
file :data:`MARKER`, written by :func:`mark_results_dir` when a run starts (Snakemake's
``onstart``: a dry run writes nothing); a folder written before the marker existed counts
when it holds only folders a study writes (:data:`RESULTS_FOLDERS`) and other studies'
results folders.
"""

from __future__ import annotations

import os
from pathlib import Path

from tokstudy.errors import TokstudyError

#: the marker file of a results folder
MARKER = ".tokstudy-results"
#: top-level folders of the project that are not results (``results_dir`` may not go there)
PROJECT_FOLDERS = frozenset(
    {"config", "docs", "envs", "profiles", "scripts", "src", "tests", "workflow"}
)
#: every folder a study writes directly under its results folder
RESULTS_FOLDERS = frozenset(
    {
        "benchmarks",
        "corpora",
        "costs",
        "downloads",
        "frequencies",
        "logs",
        "metrics",
        "models",
        "multilingual",
        "nmt",
        "plots",
        "pretrained",
        "tables",
        "tokenizers",
    }
)
_HINT = "use a new or empty folder, or one of an earlier tokstudy run (e.g. results/<study>)"


def check_results_dir(results_dir: str, project: Path) -> None:
    """Refuse a ``results_dir`` (relative to ``project``, the working directory) that is no
    place for results; see the module's docstring. Symbolic links are followed, and the
    path as written is checked too."""
    problem = results_dir_problem(results_dir, Path(project))
    if problem:
        raise TokstudyError(f"config key results_dir: {results_dir!r} {problem}; {_HINT}")


def results_dir_problem(results_dir: str, project: Path) -> str | None:
    """What is wrong with ``results_dir`` as a results folder, or ``None``."""
    root = Path(os.path.abspath(project))
    given = Path(os.path.abspath(root / results_dir))  # as written, ``..`` collapsed
    real = given.resolve()
    places = {given, real}
    roots = {root, root.resolve()}
    if any(path == Path(path.anchor) for path in places):
        return "is the filesystem root"
    if places & {Path.home(), Path.home().resolve()}:
        return "is your home directory"
    if places & roots:
        return "is the project directory"
    for path in places:
        for project_root in roots:
            if project_root.is_relative_to(path):
                return f"contains the project directory {root}"
            if path.is_relative_to(project_root):
                top = path.relative_to(project_root).parts[0]
                if top in PROJECT_FOLDERS or top.startswith("."):
                    return f"would write into the project's {top!r} folder"
    return _state_problem(real)


def _state_problem(folder: Path) -> str | None:
    """A problem of what is on disk at ``folder`` (symbolic links resolved)."""
    existing = next(path for path in (folder, *folder.parents) if path.exists())
    if not existing.is_dir():
        return "is a file" if existing == folder else f"would write under the file {existing}"
    if existing != folder or is_results_folder(folder):
        return None
    return f"is a folder with other files in it ({folder}), not a tokstudy results folder"


def is_results_folder(folder: Path, depth: int = 2) -> bool:
    """Whether ``folder`` may take a study's results: empty, marked, or holding only folders
    a study writes (a results folder from before the marker) and the results folders of
    other studies (``results/`` holding ``results/hft2022``), ``depth`` levels down."""
    entries = list(folder.iterdir())
    if any(entry.name == MARKER for entry in entries):
        return True
    return all(
        entry.is_dir()
        and (entry.name in RESULTS_FOLDERS or (depth > 0 and is_results_folder(entry, depth - 1)))
        for entry in entries
    )


def mark_results_dir(results_dir: str) -> None:
    """Create the results folder if needed and write its marker; a folder that cannot be
    written (read-only filesystem, no permission) is one line naming it."""
    folder = Path(results_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        marker = folder / MARKER
        if not marker.is_file():
            marker.write_text(
                "A tokstudy results folder: the workflow writes into it"
                " (tokstudy.workflow.results_dir).\n",
                encoding="utf-8",
            )
        if not os.access(folder, os.W_OK):
            raise PermissionError("no permission to write into it")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TokstudyError(
            f"results_dir {results_dir!r}: cannot write into {folder.resolve()} ({reason})"
        ) from None
