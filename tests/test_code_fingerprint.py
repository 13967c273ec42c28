"""Code fingerprints (:mod:`tokstudy.workflow.code_fingerprint`): what a step's fingerprint covers,
on a toy source tree whose import graph is known by construction; then, in a temporary copy
of the project, which jobs a change to metric, plot or docstring text reruns."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
import yaml
from workflow_support import copy_project, planned_jobs, project_env, snakemake

from tokstudy.errors import TokstudyError
from tokstudy.workflow.code_fingerprint import CodeIndex, code_fingerprint

TOY = {
    "__init__.py": '"""The package."""\n',
    "base.py": "def helper(x):\n    return x + 1\n",
    "deep.py": "VALUE = 3\n",
    "middle.py": "from tokstudy.deep import VALUE\n\n\ndef twice():\n    return 2 * VALUE\n",
    "plots.py": "def plot(x):\n    return [x]\n",
    "typed.py": "X = 1\n",
    "registry.py": 'ADAPTERS = {"a": "tokstudy.lazy.adapter:Adapter"}\n',
    "lazy/__init__.py": "",
    "lazy/adapter.py": "from .helpers import size\n\n\nclass Adapter:\n    n = size()\n",
    "lazy/helpers.py": "def size():\n    return 4\n",
    "steps/__init__.py": "",
    "steps/work.py": textwrap.dedent(
        '''
        """Two steps in one module."""
        from __future__ import annotations

        from typing import TYPE_CHECKING

        from tokstudy import plots
        from tokstudy.base import helper
        from tokstudy.middle import twice

        if TYPE_CHECKING:
            from tokstudy.typed import X

        LIMIT = 10


        def _shared(value):
            return min(value, LIMIT)


        def compute(snakemake):
            """Compute."""
            return _shared(helper(twice()))


        def draw(snakemake):
            """Draw."""
            from tokstudy.registry import ADAPTERS

            return plots.plot(len(ADAPTERS))
        '''
    ),
}


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    root = tmp_path / "tokstudy"
    for name, text in TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _fingerprints(root: Path) -> dict[str, str]:
    index = CodeIndex(root)
    targets = [
        "tokstudy.steps.work.compute",
        "tokstudy.steps.work.draw",
        "tokstudy.middle",
    ]
    return {target: index.fingerprint(target) for target in targets}


def _edit(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_registry_strings_count_as_imports_and_type_checking_blocks_do_not(toy: Path) -> None:
    index = CodeIndex(toy)
    # draw reaches the lazily imported adapter through the registry's string, with the
    # adapter's package and its relative import; compute reaches none of them
    assert index.closure(["tokstudy.registry"]) == {
        "tokstudy",
        "tokstudy.registry",
        "tokstudy.lazy",
        "tokstudy.lazy.adapter",
        "tokstudy.lazy.helpers",
    }
    assert "tokstudy.typed" not in index.module_imports("tokstudy.steps.work")


@pytest.mark.parametrize(
    ("name", "old", "new", "changed"),
    [
        ("deep.py", "VALUE = 3", "VALUE = 4", {"compute", "middle"}),
        ("base.py", "x + 1", "x + 2", {"compute"}),
        ("plots.py", "[x]", "[x, x]", {"draw"}),
        ("lazy/helpers.py", "return 4", "return 5", {"draw"}),
        ("steps/work.py", "LIMIT = 10", "LIMIT = 11", {"compute"}),
        ("steps/work.py", '"""Draw."""\n', '"""Draw."""\n    del snakemake\n', {"draw"}),
        ("steps/__init__.py", "", "READY = True\n", {"compute", "draw"}),
        ("__init__.py", '"""The package."""\n', 'VERSION = "1"\n', {"compute", "draw", "middle"}),
        ("typed.py", "X = 1", "X = 2", set()),  # read by annotations only
        ("steps/work.py", '"""Compute."""', '"""Compute the value."""', set()),
        ("steps/work.py", "LIMIT = 10\n", "LIMIT = 10  # a comment\n\n\n", set()),
        ("middle.py", "def twice():\n", "def twice():\n    'Twice the value.'\n", set()),
        ("__init__.py", '"""The package."""', '"""The tokstudy package."""', set()),
    ],
)
def test_a_change_changes_the_fingerprints_of_exactly_the_code_that_runs_it(
    toy: Path, name: str, old: str, new: str, changed: set[str]
) -> None:
    before = _fingerprints(toy)
    _edit(toy, name, old, new)
    after = _fingerprints(toy)
    assert {t.rpartition(".")[2] for t in before if before[t] != after[t]} == changed


def test_a_fingerprint_is_short_hex_and_stable(toy: Path) -> None:
    first, second = _fingerprints(toy), _fingerprints(toy)
    assert first == second
    assert all(len(value) == 16 and int(value, 16) >= 0 for value in first.values())
    assert len(set(first.values())) == len(first)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tokstudy.steps.nothing.compute", "no such tokstudy module"),
        (
            "tokstudy.steps.work.missing",
            "module tokstudy.steps.work defines no 'missing'",
        ),
    ],
)
def test_an_unknown_step_is_one_line(toy: Path, target: str, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        CodeIndex(toy).fingerprint(target)


def test_steps_fingerprint_only_the_parts_of_their_module_they_use(toy: Path) -> None:
    index = CodeIndex(toy)
    compute = index.covered("tokstudy.steps.work.compute")[1]
    draw = index.covered("tokstudy.steps.work.draw")[1]
    assert compute == {
        "tokstudy",
        "tokstudy.steps",
        "tokstudy.base",
        "tokstudy.middle",
        "tokstudy.deep",
    }
    assert draw == {
        "tokstudy",
        "tokstudy.steps",
        "tokstudy.plots",
        "tokstudy.registry",
        "tokstudy.lazy",
        "tokstudy.lazy.adapter",
        "tokstudy.lazy.helpers",
    }


def test_the_training_fingerprint_leaves_metrics_and_plots_out() -> None:
    training = CodeIndex(Path(__file__).resolve().parents[1] / "src" / "tokstudy").covered(
        "tokstudy.tokenizers.build.train_and_save"
    )[1]
    assert {"tokstudy.tokenizers.adapters.sentencepiece", "tokstudy.tokenizers.adapters.hft"} <= (
        training
    )
    assert (
        not {"tokstudy.metrics.compute", "tokstudy.report.plots", "tokstudy.workflow.cell_job"}
        & training
    )
    assert code_fingerprint("tokstudy.workflow.cell_job:train_cell") != code_fingerprint(
        "tokstudy.tokenizers.build.train_and_save"
    )


# --- in a temporary copy of the project: which jobs a change reruns ----------------------

STUDY = {
    "seed": 3,
    "languages": {"en": {"chatterbot": "english"}},
    "corpus_defaults": {"heldout": 0.1},
    "vocab_sizes": [200],
    "tokenizers": {"sp_bpe": {}, "char": {}},
    "metrics": ["mu", "fertility"],
    "plots": {"frequency_vocab_size": 200, "skip_top_ranks": 10},
}
# cost_table draws plots/cost.png; the study page shows the plots (they are its inputs)
PLOT_RULES = {"plot_metrics", "plot_frequencies", "cost_table", "study_page"}


def _insert_statement(path: Path, function: str, statement: str) -> None:
    """Add ``statement`` as the first statement of ``function``'s body (after its docstring)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    node = next(
        n
        for n in ast.walk(ast.parse("".join(lines)))
        if isinstance(n, ast.FunctionDef) and n.name == function
    )
    first = node.body[1] if ast.get_docstring(node) else node.body[0]
    lines.insert(first.lineno - 1, " " * first.col_offset + statement + "\n")
    path.write_text("".join(lines), encoding="utf-8")


def _edit_docstring(path: Path, function: str) -> None:
    """Change the wording of ``function``'s docstring and add a comment above it."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    node = next(
        n
        for n in ast.walk(ast.parse("".join(lines)))
        if isinstance(n, ast.FunctionDef) and n.name == function
    )
    line = node.body[0].lineno - 1
    lines[line] = lines[line].replace('"""', '"""Edited wording. ', 1)
    lines.insert(node.lineno - 1, "# a comment added by the test\n")
    path.write_text("".join(lines), encoding="utf-8")


def _rules(jobs: set[tuple[str, str]]) -> set[str]:
    return {rule for rule, _ in jobs} - {"all"}


@pytest.mark.slow
def test_a_code_change_reruns_exactly_the_jobs_that_run_that_code(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "clone")
    env = project_env(project)
    config = project / "study.yaml"
    config.write_text(yaml.safe_dump(STUDY), encoding="utf-8")

    def run(*args: str):
        result = snakemake(project, *args, config=config, env=env, snakefile=project / "Snakefile")
        assert result.returncode == 0, result.stderr[-3000:]
        return result

    run("--cores", "2")
    source = project / "src" / "tokstudy"
    tokenizer = project / "results/tokenizers/en/sp_bpe/200"
    model = (tokenizer / "spm.model").read_bytes(), (tokenizer / "spm.model").stat().st_mtime_ns

    # a docstring and a comment: nothing
    _edit_docstring(source / "metrics/compute.py", "f95")
    _edit_docstring(source / "report/plots.py", "plot_metric")
    assert "Nothing to be done" in run("-n").stdout

    # plotting code: the plot jobs only
    _insert_statement(source / "report/plots.py", "plot_metric", "_unused = None")
    plots = _rules(planned_jobs(run("-n")))
    assert "plot_metrics" in plots and plots <= PLOT_RULES
    run("--cores", "2")

    # metric code: every cell's job and what reads its metrics, no corpus, no training
    _insert_statement(source / "metrics/compute.py", "f95", "_unused = None")
    jobs = planned_jobs(run("-n"))
    cells = {w for rule, w in jobs if rule == "train_tokenizer"}
    assert cells == {
        "language=en, tokenizer=sp_bpe, size=200",
        "language=en, tokenizer=char, size=full",
    }
    assert "prepare_corpus" not in _rules(jobs)
    changed = run("--list-changes", "params").stdout.split()
    assert "results/metrics/en/sp_bpe/200.tsv" in changed
    assert "results/corpora/en/train.txt" not in changed
    cost_file = project / "results/costs/en/sp_bpe/200.json"
    trained = json.loads(cost_file.read_text(encoding="utf-8"))["train"]
    run("--cores", "2")
    log = (project / "results/logs/train_tokenizer/en/sp_bpe/200.log").read_text()
    assert "reusing the tokenizer in results/tokenizers/en/sp_bpe/200" in log
    assert (
        (tokenizer / "spm.model").read_bytes(),
        (tokenizer / "spm.model").stat().st_mtime_ns,
    ) == model
    meta = json.loads((tokenizer / "meta.json").read_text(encoding="utf-8"))
    assert meta["code"]["fingerprint"] != meta["training"]["code"]
    assert json.loads(cost_file.read_text(encoding="utf-8"))["train"] == trained
    stats = json.loads((project / "results/corpora/en/stats.json").read_text(encoding="utf-8"))
    assert stats["code"]["step"] == "tokstudy.corpora.prepare:prepare_language"
    assert "Nothing to be done" in run("-n").stdout


def test_the_version_comes_from_the_package_metadata() -> None:
    import importlib.metadata

    import tokstudy

    assert tokstudy.__version__ == importlib.metadata.version("tokstudy")
