"""Shared paths, markers and fixtures of the test suite.

Markers (registered in ``pyproject.toml``):

- ``slow``: end to end, the Snakemake workflow or a whole training pipeline (minutes);
  ``pytest -m "not slow"`` leaves these out.
- ``shared``: needs the reference data folder ``../shared`` beside the repository
  (corpora, UD treebanks, pretrained tokenizers). Without it such a test is skipped with a
  visible reason, unless ``TOKSTUDY_REQUIRE_SHARED=1`` is set (CI sets it): then it fails.
  ``TOKSTUDY_SHARED`` points the suite at another copy of that folder.
"""

from __future__ import annotations

import ast
import copy
import gzip
import os
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import settings

from tokstudy.corpora.prepare import CleaningStats, clean_lines
from tokstudy.workflow.corpora.plan import chatterbot_files

# Property tests check results, never time: a machine shared with other jobs (CI runners,
# a study running beside the tests) must not turn a slow example into a failure.
settings.register_profile("tokstudy", deadline=None)
settings.load_profile("tokstudy")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TOKSTUDY_SHARED", REPO.parent / "shared"))
HFT2022 = SHARED / "corpora" / "hft2022"
UD_ROOT = SHARED / "ud"
REQUIRE_SHARED = "TOKSTUDY_REQUIRE_SHARED"


#: a cost table (tables/cost.csv) by hand: en's sp_unigram at two sizes and char measured;
#: a job row; de/hf_bpe without its metrics phase
CELL_COSTS = """language,tokenizer,size,vocab_size,step,seconds,cpu_seconds,max_rss_mb
en,sp_unigram,1000,1000,job,9.0,8.0,100
en,sp_unigram,1000,1000,train,5.0,4.5,90
en,sp_unigram,1000,1000,metrics,2.0,1.5,95
en,sp_unigram,2000,2000,train,9.0,8.0,90
en,sp_unigram,2000,2000,metrics,3.0,2.0,95
en,char,full,,train,0.2,0.25,50
en,char,full,,metrics,0.3,0.5,60
de,hf_bpe,1000,1000,train,1.0,0.8,50
"""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or, where CI requires it, fail) a ``shared`` test when ``../shared`` is absent."""
    if item.get_closest_marker("shared") is None or SHARED.is_dir():
        return
    reason = f"needs the reference data folder {SHARED} (../shared), which is missing"
    if os.environ.get(REQUIRE_SHARED) == "1":
        pytest.fail(f"{reason}; {REQUIRE_SHARED}=1 requires it", pytrace=False)
    pytest.skip(reason)


def logged(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    """The messages ``caplog`` holds from ``logger`` alone (other tests may leave other
    loggers at INFO)."""
    return [r.getMessage() for r in caplog.records if r.name == logger]


def utf8_bytes(lines: list[str]) -> int:
    """UTF-8 bytes of the lines, each with its newline: the bytes bits per byte divides by."""
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def write_lines(path: Path, lines: list[str]) -> Path:
    """Write lines as a prepared corpus."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def hft_lines(language: str, count: int) -> list[str]:
    """The first ``count`` lines of a language's HFT-2022 corpus in ``../shared``."""
    with gzip.open(HFT2022 / f"{language}.txt.gz", "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in islice(handle, count)]


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread (and do not stall on a busy machine)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def config_schema() -> dict:
    """The workflow's config schema, read once (its YAML takes a quarter of a second)."""
    from tokstudy.cli import DEFAULT_SCHEMA
    from tokstudy.workflow.config_files import load_config_file

    return load_config_file(DEFAULT_SCHEMA)


@pytest.fixture
def schema_read_once(monkeypatch: pytest.MonkeyPatch, config_schema: dict) -> None:
    """``check-config`` given a copy of the schema read once instead of reading its file."""
    from tokstudy.cli import DEFAULT_SCHEMA
    from tokstudy.workflow import config_files

    load = config_files.load_config_file
    monkeypatch.setattr(
        config_files,
        "load_config_file",
        lambda path: copy.deepcopy(config_schema) if Path(path) == DEFAULT_SCHEMA else load(path),
    )


@pytest.fixture(scope="session")
def english_lines() -> list[str]:
    """The English dialog lines of the installed chatterbot-corpus package."""
    return list(clean_lines(chatterbot_files("english"), "en", "error", CleaningStats()))


@pytest.fixture(scope="session")
def english_corpus(tmp_path_factory: pytest.TempPathFactory, english_lines: list[str]) -> Path:
    """A prepared English corpus file of about 3,000 lines."""
    return write_lines(tmp_path_factory.mktemp("corpus") / "en.txt", english_lines[:3000])


def imported_modules(path: Path, module: str, type_checking: bool = True) -> set[str]:
    """tokstudy modules a source file imports, anywhere in it; without ``type_checking``,
    those of ``if TYPE_CHECKING:`` blocks (read by annotations only) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if not type_checking
        and isinstance(block, ast.If)
        and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    imported = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join([*module.split(".")[: -node.level], node.module])
            imported |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in imported if name.startswith("tokstudy")}


def module_name(path: Path, root: Path = REPO / "src") -> str:
    """The dotted name of a module file under ``root`` (the folder holding its package)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_graph(folder: Path, type_checking: bool = True) -> dict[str, set[str]]:
    """Module → the modules under ``folder`` (a package of ``src/``) it imports
    (:func:`imported_modules`)."""
    modules = {module_name(path): path for path in folder.rglob("*.py")}
    graph = {
        name: imported_modules(path, name, type_checking) & set(modules) - {name}
        for name, path in modules.items()
    }
    return {
        name: targets | packages_run(name, targets, set(modules)) for name, targets in graph.items()
    }


def packages_run(name: str, targets: set[str], modules: set[str]) -> set[str]:
    """The packages whose ``__init__`` importing ``targets`` runs first: each package of a
    target that does not also contain ``name`` (those are already being imported)."""
    own = {name.rsplit(".", depth)[0] for depth in range(1, name.count(".") + 1)}
    return {
        target.rsplit(".", depth)[0]
        for target in targets
        for depth in range(1, target.count(".") + 1)
    } & modules - own - {name}


def cell_interval(columns, replicates, statistic, **resampling):
    """:func:`tokstudy.statistics.bootstrap.cluster_interval` with every cell its own
    cluster in one block: cells resampled one by one, then seeds within them;
    ``statistic(*columns, scores, axis=-1)``."""
    from tokstudy.statistics.bootstrap import cluster_interval

    cells = len(replicates)
    return cluster_interval(
        columns,
        replicates,
        [[cell] for cell in range(cells)],
        [0] * cells,
        lambda *values: statistic(*values[:-1], axis=-1),
        **resampling,
    )
