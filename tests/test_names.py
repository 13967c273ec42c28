"""One meaning per name in ``src/tokstudy``: no two modules define a public class of one
name, and a ``vocab_size`` the code binds (a parameter, a variable, a field) is a requested
size, with the exceptions :data:`VOCAB_SIZE_BINDINGS` gives reasons for (docs/architecture.md
names the other sizes: the label ``size``, the ``vocabulary_items`` of an actual vocabulary,
the ``listed_size`` of the tables).

The scans read the syntax tree: a keyword argument handed to a library (``vocab_size=`` of
a Hugging Face trainer or config), a file's key or a table's column is not a name the code
binds and is not scanned."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from conftest import REPO, module_name

PACKAGE = REPO / "src/tokstudy"

#: public class names two modules define, with why they stay
SHARED_CLASS_NAMES = {
    # the HFT and Wordmap segmenters: renaming either changes the training fingerprint of
    # every tokenizer (tokstudy.workflow.code_fingerprint), retraining every study's cells
    "Segmenter": {"tokstudy.tokenizers.hft.segment", "tokstudy.tokenizers.wordmap.segmenter"},
}

#: registries and settings that one module alone may define (the issue's ``Task`` and
#: ``FAMILIES`` once had two meanings each; the metric registries three)
ONE_MODULE_NAMES = ("Task", "FAMILIES", "METRICS", "ADAPTERS", "TASKS", "CHARACTERBERT")

#: where the code binds ``vocab_size``: module → the definitions (qualified names) that do;
#: each one a requested size unless its comment says otherwise
VOCAB_SIZE_BINDINGS = {
    "tokstudy.api": {"train_tokenizer"},
    "tokstudy.models.fast_transformers_tokenizer": {"train_wordpiece"},
    "tokstudy.report.cost": {"CostSource", "_size_key"},
    "tokstudy.tokenizers.base": {"TrainSpec"},
    "tokstudy.tokenizers.bbpe.learner": {"learn_bpe"},
    "tokstudy.tokenizers.cells": {"Cell", "make_cell"},
    "tokstudy.workflow.footprint": {"_id_bytes"},
    # transformers' slow-tokenizer interface requires this property (its own size)
    "tokstudy.tokenizers.slow_transformers_tokenizer": {"TokenListTokenizer.vocab_size"},
    # a size label: the rule plot_frequencies's parameter of that name, which the binder
    # binds by name (renaming it changes the rule's parameters: issue 58's decision)
    "tokstudy.report.plots": {"plot_language_frequencies"},
    # the reached size written under meta.json's key: renaming it changes every
    # tokenizer's training fingerprint (see SHARED_CLASS_NAMES)
    "tokstudy.tokenizers.pretrained": {"import_pretrained"},
}


def top_level_names(root: Path, package: str, classes_only: bool = False) -> dict[str, set[str]]:
    """Public top-level name (class, function or assigned name; with ``classes_only``,
    class) → the modules of ``root/package`` that define it."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if classes_only and not isinstance(node, ast.ClassDef):
                continue
            for name in _defined(node):
                if not name.startswith("_"):
                    found[name].add(module_name(path, root))
    return found


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [target.id for target in node.targets if isinstance(target, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


class _Bindings(ast.NodeVisitor):
    """The qualified names of the definitions that bind ``name``."""

    def __init__(self, name: str) -> None:
        self.name, self.scope, self.found = name, [], set()

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        if not isinstance(node, ast.ClassDef) and node.name == self.name:
            self.found.add(".".join(self.scope))
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_arg(self, node: ast.arg) -> None:
        if node.arg == self.name:
            self.found.add(".".join(self.scope) or "<module>")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == self.name and isinstance(node.ctx, ast.Store):
            self.found.add(".".join(self.scope) or "<module>")


def bindings(root: Path, package: str, name: str) -> dict[str, set[str]]:
    """Module → the definitions in it that bind ``name`` (parameter, variable, field,
    function or property of that name), for the modules of ``root/package`` that do."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        visitor = _Bindings(name)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        if visitor.found:
            found[module_name(path, root)] = visitor.found
    return found


def test_the_scans_find_a_shared_class_and_each_kind_of_binding(tmp_path: Path) -> None:
    package = tmp_path / "toy"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text(
        "class Row:\n    vocab_size: int\n\nclass _Hidden:\n    pass\n\n"
        "def fit(vocab_size):\n    pass\n\nvocab_size = 3\n"
    )
    (package / "inner" / "two.py").write_text(
        "class Row:\n    pass\n\nclass _Hidden:\n    pass\n\n"
        "class View:\n    @property\n    def vocab_size(self):\n"
        "        for vocab_size in range(2):\n            pass\n"
        "        return len(self)\n\n"
        "def read(meta):\n    return meta['vocab_size'], dict(vocab_size=1)\n"
    )
    assert top_level_names(tmp_path, "toy") == {
        "Row": {"toy.one", "toy.inner.two"},
        "View": {"toy.inner.two"},
        "fit": {"toy.one"},
        "vocab_size": {"toy.one"},
        "read": {"toy.inner.two"},
    }
    assert top_level_names(tmp_path, "toy", classes_only=True) == {
        "Row": {"toy.one", "toy.inner.two"},
        "View": {"toy.inner.two"},
    }
    assert bindings(tmp_path, "toy", "vocab_size") == {
        "toy.one": {"Row", "fit", "<module>"},
        "toy.inner.two": {"View.vocab_size"},
    }


def test_no_two_modules_define_a_public_class_of_one_name() -> None:
    shared = {
        name: modules
        for name, modules in top_level_names(PACKAGE.parent, "tokstudy", classes_only=True).items()
        if len(modules) > 1
    }
    assert shared == SHARED_CLASS_NAMES


def test_each_registry_name_is_defined_in_one_module() -> None:
    defined = top_level_names(PACKAGE.parent, "tokstudy")
    assert {name: len(defined[name]) for name in ONE_MODULE_NAMES} == dict.fromkeys(
        ONE_MODULE_NAMES, 1
    )


def test_the_code_binds_vocab_size_only_where_it_is_a_requested_size() -> None:
    assert bindings(PACKAGE.parent, "tokstudy", "vocab_size") == VOCAB_SIZE_BINDINGS
