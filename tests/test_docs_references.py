"""The docs name only what exists: every repository path (``src/…``, ``workflow/…``,
``tests/…``…), module path (``tokstudy.x.y``, down to a function, class or constant) and
rule name (``rule `x```, ``resources.x``) that README.md, config/README.md, docs/*.md and the
module docstrings of ``src/tokstudy`` mention is in the repository. Placeholders
(``<stage>``, ``{wildcard}``, ``*``, ``…``) match any name; ``{a,b}`` is each of a and b.

Dated measurement logs name the code they measured on purpose; :data:`HISTORICAL` lists each
such mention with its date and why it stays."""

from __future__ import annotations

import ast
import itertools
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest
from conftest import REPO

SRC = REPO / "src"

#: (file, mention) → why the mention stays although it names nothing that exists now
HISTORICAL: dict[tuple[str, str], str] = {
    ("docs/benchmarks.md", "tokstudy.evaluation"): (
        "2026-11-23: the imports of a job measured then; the module is now tokstudy.metrics"
    ),
    ("docs/benchmarks.md", "tokstudy.metrics.compute_metrics"): (
        "2026-11-23: the function each checkout of that comparison had (now in "
        "tokstudy.metrics.compute)"
    ),
}

#: a repository path: a top-level folder of the project, then path characters
PATH = re.compile(
    r"(?<![\w./~-])((?:src|workflow|config|docs|tests|scripts|profiles|envs|\.ci|tokstudy)"
    r"/[\w./<>{}*…,+-]*[\w>}*/])"
)
#: a module path, ``tokstudy.`` then names (a placeholder ends it)
MODULE = re.compile(r"(?<![\w./-])tokstudy(?:\.\w+)+")
#: a rule named as one: "rule `x`", "rules `x`", "`x` rule", "`resources.x`"
RULES = (
    re.compile(r"\brules? `(\w+)`"),
    re.compile(r"`(\w+)` rule\b"),
    re.compile(r"(?<![-\w])`?resources\.(?!py\b)(\w+)\b"),
)


def sources() -> dict[str, str]:
    """The texts checked, by their path in the repository."""
    files = [REPO / "README.md", REPO / "config" / "README.md", *sorted(REPO.glob("docs/*.md"))]
    texts = {str(f.relative_to(REPO)): f.read_text(encoding="utf-8") for f in files}
    for module in sorted((SRC / "tokstudy").rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
        if docstring:
            texts[str(module.relative_to(REPO))] = docstring
    return texts


def expansions(mention: str) -> list[str]:
    """The globs a path mention stands for: ``{a,b}`` each alternative, ``{x}``, ``<x>`` and
    ``…`` any name."""
    mention = re.sub(r"<[^<>/]*>|\{[^{},/]*\}|…", "*", mention)
    parts = re.split(r"(\{[^{}]*\})", mention)
    choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    return ["".join(chosen) for chosen in itertools.product(*choices)]


def path_exists(mention: str) -> bool:
    mention = mention.split("::")[0].rstrip(".,")
    if mention.startswith("tokstudy/"):
        mention = "src/" + mention
    return all(
        any(REPO.glob(pattern.rstrip("/"))) if "*" in pattern else (REPO / pattern).exists()
        for pattern in expansions(mention)
    )


@cache
def defined_names(module: Path) -> dict[str, set[str]]:
    """A module's top-level names, each with the names its body defines (a class's members),
    and those its ``__all__`` lists."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members = {
                target.id
                for child in getattr(node, "body", [])
                for target in (
                    [child]
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    else getattr(child, "targets", [getattr(child, "target", None)])
                )
                if isinstance(target, ast.Name)
            } | {
                child.name
                for child in getattr(node, "body", [])
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
            names[node.name] = members
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                # a package's __all__ names what it gives lazily (PEP 562 __getattr__)
                names |= {
                    item.value: set()
                    for item in ast.walk(node.value)
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                }
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = set()
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = set()
    return names


def module_exists(mention: str) -> bool:
    """``tokstudy.a.b``: a package or module, then at most a name and a member in it."""
    parts = mention.split(".")
    path = SRC
    for index, part in enumerate(parts):
        if (path / part).is_dir():
            path = path / part
            continue
        if (path / f"{part}.py").is_file():
            module, rest = path / f"{part}.py", parts[index + 1 :]
        elif (path / "__init__.py").is_file() and index > 0:
            module, rest = path / "__init__.py", parts[index:]
        else:
            return False
        names = defined_names(module)
        if not rest:
            return True
        if rest[0] not in names or len(rest) > 2:
            return False
        return len(rest) == 1 or rest[1] in names[rest[0]]
    return True


def rule_names() -> set[str]:
    """Every rule of the Snakefile and the rule files, and ``default`` (the resources row
    every rule falls back on)."""
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").rglob("*.smk"))]
    text = "\n".join(f.read_text(encoding="utf-8") for f in files)
    return set(re.findall(r"^\s*rule (\w+):", text, re.MULTILINE)) | {"default"}


def mentions() -> list[tuple[str, str, str]]:
    """(kind, file, mention) of every path, module and rule the texts name."""
    found = []
    for name, text in sources().items():
        found += [("path", name, m) for m in PATH.findall(text)]
        found += [("module", name, m) for m in MODULE.findall(text)]
        found += [("rule", name, m) for pattern in RULES for m in pattern.findall(text)]
    return sorted(set(found))


def missing(found: list[tuple[str, str, str]]) -> list[str]:
    rules = rule_names()
    check = {"path": path_exists, "module": module_exists, "rule": rules.__contains__}
    return [
        f"{name}: {kind} {mention!r} does not exist"
        for kind, name, mention in found
        if not check[kind](mention) and (name, mention) not in HISTORICAL
    ]


def test_every_path_module_and_rule_the_docs_name_exists() -> None:
    found = mentions()
    kinds = {kind for kind, _, _ in found}
    assert kinds == {"path", "module", "rule"}, f"the extraction found only {kinds}"
    assert missing(found) == []


def test_historical_mentions_are_dated_and_still_made() -> None:
    texts = sources()
    for (name, mention), reason in HISTORICAL.items():
        assert re.match(r"\d{4}-\d{2}-\d{2}: \S", reason), f"{name}: {mention}: no date"
        assert mention in texts[name], f"{name} no longer mentions {mention}: drop its entry"


@pytest.mark.parametrize(
    ("text", "kind", "mention", "exists"),
    [
        ("in `src/tokstudy/study/`, one module", "path", "src/tokstudy/study/", False),
        (
            "see `src/tokstudy/tokenizers/cells.py`",
            "path",
            "src/tokstudy/tokenizers/cells.py",
            True,
        ),
        ("`workflow/rules/<stage>.smk`", "path", "workflow/rules/<stage>.smk", True),
        ("`tokstudy/<stage>/plan.py`", "path", "tokstudy/<stage>/plan.py", True),
        ("`tests/test_docs.py::test_readme_is_short`", "path", "tests/test_docs.py", True),
        ("`docs/{clm,results}.md`", "path", "docs/{clm,results}.md", True),
        ("`docs/{clm,nothing}.md`", "path", "docs/{clm,nothing}.md", False),
        (
            "(`tokstudy.statistics.mixed.fit_note`)",
            "module",
            "tokstudy.statistics.mixed.fit_note",
            True,
        ),
        (
            "`tokstudy.workflow.snakemake_job.Snakemake` protocol",
            "module",
            "tokstudy.workflow.snakemake_job.Snakemake",
            True,
        ),
        (
            "`tokstudy.workflow.snakemake_job.Snakemake.input`",
            "module",
            "tokstudy.workflow.snakemake_job.Snakemake.input",
            True,
        ),
        (
            "`tokstudy.workflow.snakemake_job.Snakemake.nothing`",
            "module",
            "tokstudy.workflow.snakemake_job.Snakemake.nothing",
            False,
        ),
        ("a `tokstudy.training.stats` module", "module", "tokstudy.training.stats", False),
        ("`tokstudy.<stage>.steps.<rule>`", "module", None, True),
        ("rule `train_tokenizer` trains", "rule", "train_tokenizer", True),
        ("rule `train_tokenizers` trains", "rule", "train_tokenizers", False),
        ("`resources.pretrain_mlm`", "rule", "pretrain_mlm", True),
    ],
)
def test_mentions_are_found_and_checked(
    text: str, kind: str, mention: str | None, exists: bool, monkeypatch
) -> None:
    import test_docs_references as module

    monkeypatch.setattr(module, "sources", lambda: {"docs/x.md": text})
    found = mentions()
    if mention is None:
        assert found == []
        return
    assert (kind, "docs/x.md", mention) in found
    assert (missing([(kind, "docs/x.md", mention)]) == []) == exists


def test_every_path_the_mutation_run_names_exists() -> None:
    # a module moved without its [tool.mutmut] line would leave it out of docs/mutation.md's run
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "mutmut"
    ]
    named = [*settings["only_mutate"], *settings["pytest_add_cli_args_test_selection"]]
    assert [path for path in named if not list(REPO.glob(path))] == []
