"""The import graph of ``src/tokstudy``: no circle of modules (imports read by annotations
only included) nor of packages, the library never imports the workflow wing
(``tokstudy.workflow``) or Snakemake, and no module imports another module's private name."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest
from conftest import REPO, module_graph, module_name, packages_run

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


def test_importing_a_module_runs_its_packages_unless_the_importer_is_inside_them() -> None:
    # importing tokstudy.workflow.study.paths runs tokstudy/workflow/study/__init__.py first:
    # an edge the cycle search must see (a planner importing the study, whose __init__
    # imported it back)
    modules = {"t", "t.study", "t.study.paths", "t.study.core", "t.analyses", "t.analyses.plan"}
    assert packages_run("t.analyses.plan", {"t.study.paths"}, modules) == {"t.study"}
    assert packages_run("t.study.core", {"t.study.paths"}, modules) == set()


WORKFLOW_WING = "tokstudy.workflow"
#: above both wings: the command line reads study configs and calls the library
ENTRY_POINTS = {"tokstudy.cli"}


def package_of(module: str) -> str:
    """The package a module counts in: ``tokstudy.<x>`` in the library (a root module is its
    own package), ``tokstudy.workflow.<x>`` in the workflow wing."""
    parts = module.split(".")
    return ".".join(parts[: 3 if parts[1:2] == ["workflow"] else 2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package → the other packages its modules import."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = package_of(module)
        packages.setdefault(here, set()).update(package_of(target) for target in targets)
        packages[here].discard(here)
    return packages


def in_library(module: str) -> bool:
    return not module.startswith(WORKFLOW_WING) and module not in ENTRY_POINTS


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of every module a source file imports (absolute imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    names |= {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    return {name.split(".")[0] for name in names}


def test_the_packages_have_no_import_cycle() -> None:
    graphlib.TopologicalSorter(package_graph(module_graph(PACKAGE))).prepare()


def test_the_package_graph_finds_a_cycle_the_module_graph_does_not() -> None:
    # t.a.x -> t.b.y and t.b.z -> t.a.w: no module circle, but the packages t.a and t.b circle
    graph = {"t.a.x": {"t.b.y"}, "t.b.y": set(), "t.b.z": {"t.a.w"}, "t.a.w": set()}
    graphlib.TopologicalSorter(graph).prepare()
    assert package_graph(graph) == {"t.a": {"t.b"}, "t.b": {"t.a"}}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(package_graph(graph)).prepare()


def test_the_library_never_imports_the_workflow_wing() -> None:
    back = [
        f"{module} imports {target}"
        for module, targets in module_graph(PACKAGE).items()
        if in_library(module)
        for target in targets
        if target.startswith(WORKFLOW_WING)
    ]
    assert back == []


def test_only_the_workflow_wing_and_the_command_line_import_snakemake() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        if in_library(module) and "snakemake" in third_party_imports(path):
            found.append(module)
    assert found == []


def test_the_wings_are_told_apart() -> None:
    assert package_of("tokstudy.workflow.analyses.parity.plan") == "tokstudy.workflow.analyses"
    assert package_of("tokstudy.analyses.parity.tables") == "tokstudy.analyses"
    assert package_of("tokstudy.errors") == "tokstudy.errors"
    assert not in_library("tokstudy.workflow.study.core") and not in_library("tokstudy.cli")
    assert in_library("tokstudy.tokenizers.registry")


def top_level_graph() -> dict[str, set[str]]:
    """Each top-level module or package of ``tokstudy`` (its package face ``tokstudy``
    aside) → the others its modules import."""
    rooms: dict[str, set[str]] = {}
    for module, targets in module_graph(PACKAGE).items():
        parts = module.split(".")
        if len(parts) < 2:
            continue
        rooms.setdefault(parts[1], set()).update(
            target.split(".")[1] for target in targets if target.count(".") >= 1
        )
    return {room: targets - {room} for room, targets in rooms.items()}


def test_the_top_level_stays_small() -> None:
    # issue 58: fewer top-level modules and packages (22 when filed) and fewer imports
    # between them (84) than before the refactoring; a new top-level file is a choice
    # to make here, not a drift
    graph = top_level_graph()
    arrows = sum(len(targets) for targets in graph.values())
    assert len(graph) <= 17, sorted(graph)
    assert arrows <= 76, {room: sorted(targets) for room, targets in sorted(graph.items())}
    assert graph["errors"] == set() and graph["files"] == {"errors"}
