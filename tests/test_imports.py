"""The import graph of ``src/tokstudy``: no module imports another module's private name."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

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
