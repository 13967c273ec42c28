"""The import graph of ``src/tokstudy``: no circle (imports read by annotations only
included), the library never imports the study, and no module imports another module's
private name."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest
from conftest import REPO, module_graph, packages_run

PACKAGE = REPO / "src/tokstudy"


def private_imports(path: Path) -> list[str]:
    """``from x import _name`` statements of a source file (dunders such as ``__version__``
    are public), as ``line: x._name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.lineno}: {node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.endswith("__")
    ]


def test_the_scan_finds_a_private_import(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("from a.b import _hidden, __version__, shown\n", encoding="utf-8")
    assert private_imports(source) == ["1: a.b._hidden"]


def test_no_module_imports_a_private_name() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in private_imports(path)
    ]
    assert found == []


def test_the_package_has_no_import_cycle() -> None:
    # every import counts, those of `if TYPE_CHECKING:` blocks too: a circle of annotations
    # is still a circle a reader has to walk
    graphlib.TopologicalSorter(module_graph(PACKAGE)).prepare()  # CycleError names it


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(graph).prepare()


def is_planner(module: str) -> bool:
    """A module of the planning layer outside ``tokstudy.study``: a stage's or an
    analysis's planner (``plan``), the analyses' registry and planner base."""
    parts = module.split(".")
    if parts[-1] == "plan":
        return True
    return parts[:2] == ["tokstudy", "analyses"] and parts[-1] in {"registry", "base"}


def test_importing_a_module_runs_its_packages_unless_the_importer_is_inside_them() -> None:
    # importing tokstudy.study.paths runs tokstudy/study/__init__.py first: an edge the
    # cycle search must see (a planner importing the study, whose __init__ imported it back)
    modules = {"t", "t.study", "t.study.paths", "t.study.core", "t.analyses", "t.analyses.plan"}
    assert packages_run("t.analyses.plan", {"t.study.paths"}, modules) == {"t.study"}
    assert packages_run("t.study.core", {"t.study.paths"}, modules) == set()


def test_models_and_nmt_never_import_the_study_and_the_study_imports_nothing_that_does() -> None:
    graph = module_graph(PACKAGE)
    back = [
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name.startswith(("tokstudy.models", "tokstudy.nmt")) and not is_planner(name)
        for target in targets
        if target.startswith("tokstudy.study")
    ]
    assert back == []
    # the planning layer: the study and the planners (a stage's or an analysis's plan, the
    # analyses' registry)
    study = {name for name in graph if name.startswith("tokstudy.study") or is_planner(name)}
    reached, todo = set(), list(study)
    while todo:  # every module the study imports, directly or not
        for target in graph[todo.pop()] - reached:
            reached.add(target)
            todo.append(target)
    assert not {name for name in reached - study if graph[name] & study}
