"""Fingerprints of the tokstudy code a workflow step runs, so that Snakemake reruns exactly
the jobs whose code changed.

Every rule passes its step's fingerprint as a parameter (``workflow/rules/common.smk``,
``step()``); Snakemake's own ``params`` trigger then reruns the jobs of a rule whose code
changed, and ``snakemake --list-changes params`` names them. The fingerprint of a step
``tokstudy.<module>.<function>`` covers, read statically from the source (nothing is
imported):

- in the step's own module: the function, the module's other top-level statements that
  are not definitions, and the top-level definitions and imports these name, transitively
  (a module holds several functions: a change to one is not a change to the others);
- every tokstudy module these import, whole, and the modules those import, transitively
  (imports inside functions included; ``if TYPE_CHECKING:`` blocks left out; a string
  constant naming a tokstudy module, as the lazily imported adapters of
  :data:`tokstudy.tokenizers.registry.ADAPTERS`, counts as an import);
- the packages (``__init__.py``) above each of these modules, which their import runs.

Code is hashed, not text: each statement as its syntax tree (:func:`ast.dump`, without
positions) with docstrings removed, so a comment, a docstring or a blank line changes no
fingerprint. Each module is parsed once per process (:func:`code_index`).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import tokstudy
from tokstudy.errors import TokstudyError

#: what calls a library function a rule names (``module:function``) with the job's files
#: and settings: its code is part of that function's fingerprint
BINDING_RUNNER = "tokstudy.workflow.dispatch"
#: hexadecimal digits of a fingerprint (64 bits)
FINGERPRINT_DIGITS = 16
_MODULE_STRING = re.compile(r"tokstudy(?:\.\w+)+(?=:\w+$|$)")
_DOCSTRING_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _strip_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` without the docstring of the module and of each class and function."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCSTRING_OWNERS) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
    return tree


def _is_type_checking_block(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test)


def _walk(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node under ``nodes``, ``if TYPE_CHECKING:`` blocks left out."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt) and _is_type_checking_block(node):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _digest(parts: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8"))
        hasher.update(b"\0")
    return hasher.hexdigest()


@dataclass
class _Module:
    """One parsed module: its statements (docstrings removed) and their dumps."""

    name: str
    is_package: bool
    statements: list[ast.stmt]
    dumps: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dumps = [ast.dump(statement) for statement in self.statements]

    @property
    def package(self) -> str:
        """The package relative imports of this module start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


class CodeIndex:
    """The modules of one tokstudy source tree (``root``: the ``tokstudy`` package folder),
    parsed on first use, and the fingerprints of steps and modules in it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.paths: dict[str, Path] = {}
        for path in sorted(self.root.rglob("*.py")):
            parts = ("tokstudy", *path.relative_to(self.root).with_suffix("").parts)
            self.paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
        self._modules: dict[str, _Module] = {}
        self._imports: dict[str, frozenset[str]] = {}
        self._digests: dict[str, str] = {}

    # --- modules ----------------------------------------------------------------------

    def module(self, name: str) -> _Module:
        """The parsed module ``name``."""
        if name not in self._modules:
            path = self.paths[name]
            tree = _strip_docstrings(ast.parse(path.read_text(encoding="utf-8"), str(path)))
            self._modules[name] = _Module(name, path.name == "__init__.py", tree.body)
        return self._modules[name]

    def module_digest(self, name: str) -> str:
        """Hash of one module's code (its own, not what it imports)."""
        if name not in self._digests:
            self._digests[name] = _digest([name, *self.module(name).dumps])
        return self._digests[name]

    def imported_modules(self, module: _Module, nodes: Iterable[ast.AST]) -> set[str]:
        """The tokstudy modules that import statements and module-naming strings under
        ``nodes`` (statements of ``module``) reach."""
        found: set[str] = set()
        for node in _walk(nodes):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = self._import_base(module, node)
                found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                match = _MODULE_STRING.match(node.value)
                if match:
                    found |= self._module_prefix(match.group(0))
        return {name for name in found if name in self.paths}

    def _module_prefix(self, dotted: str) -> set[str]:
        """The longest tokstudy module ``dotted`` starts with (``dotted`` may name a
        module, or a function or class in one)."""
        parts = dotted.split(".")
        prefixes = (".".join(parts[:i]) for i in range(len(parts), 1, -1))
        return {next((p for p in prefixes if p in self.paths), dotted)}

    def _import_base(self, module: _Module, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = module.package.split(".")
        base = package[: len(package) - node.level + 1]
        return ".".join([*base, node.module] if node.module else base)

    def module_imports(self, name: str) -> frozenset[str]:
        """The tokstudy modules module ``name`` imports anywhere in it."""
        if name not in self._imports:
            module = self.module(name)
            self._imports[name] = frozenset(self.imported_modules(module, module.statements))
        return self._imports[name]

    def closure(self, names: Iterable[str]) -> set[str]:
        """``names``, the modules they import transitively, and the packages above all."""
        seen: set[str] = set()
        stack = [*names]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(self.module_imports(name))
            stack.extend(p for p in _parent_packages(name) if p in self.paths)
        return seen

    # --- fingerprints -----------------------------------------------------------------

    def fingerprint(self, target: str) -> str:
        """The fingerprint of a module, or of a top-level function or class of one
        (``tokstudy.tokenizers.build.train_and_save``, or ``module:function`` for a function
        a rule calls through the binder, whose code it then covers too): see the module's
        docstring."""
        own, modules = self.covered(target)
        parts = [*own, *(f"{name}:{self.module_digest(name)}" for name in sorted(modules))]
        return _digest(parts)[:FINGERPRINT_DIGITS]

    def covered(self, target: str) -> tuple[list[str], set[str]]:
        """What ``target``'s fingerprint covers: the dumps of the statements of its own
        module it needs (none for a module), and the modules whose whole code it covers."""
        module_name, attribute = self._split(target)
        if attribute is None:
            return [], self.closure([module_name])
        module = self.module(module_name)
        kept = _statements_reached(module, attribute)
        dependencies = self.imported_modules(module, [module.statements[i] for i in kept])
        parents = [p for p in _parent_packages(module_name) if p in self.paths]
        runner = [BINDING_RUNNER] if ":" in target else []
        own = [target, *(module.dumps[i] for i in sorted(kept))]
        return own, self.closure([*dependencies, *parents, *runner])

    def _split(self, target: str) -> tuple[str, str | None]:
        if ":" in target:
            module_name, _, attribute = target.partition(":")
        elif target in self.paths:
            return target, None
        else:
            module_name, _, attribute = target.rpartition(".")
        if module_name not in self.paths:
            raise TokstudyError(f"{target!r}: no such tokstudy module under {self.root}")
        if not any(attribute in _bound_names(s) for s in self.module(module_name).statements):
            raise TokstudyError(f"{target!r}: module {module_name} defines no {attribute!r}")
        return module_name, attribute


def _parent_packages(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _bound_names(statement: ast.stmt) -> set[str]:
    """The names a top-level statement binds (definitions, assignments, imports)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _is_definition(statement: ast.stmt) -> bool:
    return bool(_bound_names(statement)) or (
        isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
    )


def _statements_reached(module: _Module, attribute: str) -> set[int]:
    """Indexes of the top-level statements of ``module`` that top-level definition
    ``attribute`` needs: itself, every statement that is not a definition (it runs on
    import), and the definitions and imports these name, transitively."""
    binders: dict[str, list[int]] = {}
    for index, statement in enumerate(module.statements):
        for name in _bound_names(statement):
            binders.setdefault(name, []).append(index)
    stack = [
        index
        for index, statement in enumerate(module.statements)
        if not _is_definition(statement) and not _is_type_checking_block(statement)
    ] + binders[attribute]
    kept: set[int] = set()
    while stack:
        index = stack.pop()
        if index in kept:
            continue
        kept.add(index)
        for node in _walk([module.statements[index]]):
            if isinstance(node, ast.Name):
                stack.extend(binders.get(node.id, []))
    return kept


@cache
def code_index() -> CodeIndex:
    """The index of the tokstudy source this process imports (built once per process)."""
    return CodeIndex(Path(tokstudy.__file__).parent)


def code_fingerprint(target: str) -> str:
    """The fingerprint of ``target`` (a tokstudy module, function or class) in the tokstudy
    this process imports; see :class:`CodeIndex`."""
    return code_index().fingerprint(target)
