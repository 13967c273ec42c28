"""The step layer's layout: rule → ``workflow/scripts/run_step.py`` → the library function
it names.

Every rule of ``workflow/rules/<stage>.smk`` (``analyses/<name>.smk``) that runs a script runs
the one dispatcher ``workflow/scripts/run_step.py`` and names with ``**step(...)`` (which
also fingerprints its code) a library function (``tokstudy.<package>.<module>:<name>``),
called through the binder with the rule's entries of its parameters' names; there are no
step modules; the library never imports the binder, and the binder never imports
Snakemake. Then functions run on Snakemake's own containers, through the dispatcher.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import typing
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import REPO, write_lines
from snakemake.iocontainers import Namedlist

from tokstudy.models.task_registry import TASKS
from tokstudy.workflow.binder import JOB_VALUES, imported_function
from tokstudy.workflow.code_fingerprint import code_fingerprint
from tokstudy.workflow.dispatch import run_named_step
from tokstudy.workflow.nmt.plan import NMTPlanner
from tokstudy.workflow.study.paths import CELL
from tokstudy.workflow.tokenizers.plan import TokenizersPlanner

RULES = REPO / "workflow" / "rules"
SCRIPTS = REPO / "workflow" / "scripts"
SOURCE = REPO / "src"
#: what calls the library function a rule names with the job's entries: the dispatcher,
#: the binder and what they share (the ``Snakemake`` protocol and ``code_record``)
CALLERS = {
    f"tokstudy.workflow.{name}": SOURCE / "tokstudy" / "workflow" / f"{name}.py"
    for name in ("dispatch", "binder", "snakemake_job")
}


def rule_files() -> list[Path]:
    """Every rule file: one per stage, and one per analysis under ``analyses/``."""
    return sorted([*RULES.glob("*.smk"), *RULES.glob("analyses/*.smk")])


RULE = re.compile(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", re.M)
SCRIPT = re.compile(r"^\s+script\s*:\s*\n\s+(\S+)", re.M)
STEP = re.compile(r"^\s+\*\*step\(\s*(['\"])(.+?)\1\s*\),?$", re.M)


def script_rules() -> dict[tuple[Path, str], str]:
    """(rule file, rule) → the step the rule names with ``**step(...)``, for every .smk file;
    every ``script:`` is ``RUN_STEP``.

    The text splits into top-level blocks at each line that starts in the first column
    (``rule``, ``localrules``, Python code such as an ``if`` around a rule); a ``script:``
    must sit in a rule's block.
    """
    return {key: step for key, (step, _) in _script_rule_blocks().items()}


def _script_rule_blocks() -> dict[tuple[Path, str], tuple[str, str]]:
    """(rule file, rule) → (the step it names, the rule's text)."""
    found = {}
    for smk in rule_files():
        for block in re.split(r"\n(?=[^\s#])", smk.read_text(encoding="utf-8")):
            scripts = SCRIPT.findall(block)
            if not scripts:
                continue
            rule = RULE.search(block)
            assert rule and scripts == ["RUN_STEP"], f"{smk.name}: {block[:80]}: {scripts}"
            steps = STEP.findall(block)
            assert len(steps) == 1, f"{smk.name}: rule {rule.group(1)} names no single step"
            found[smk, rule.group(1)] = (steps[0][1], block)
    return found


def bound_rules() -> dict[tuple[Path, str], tuple[str, str]]:
    """Every rule that runs a script: the library function it names, the rule's text."""
    return _script_rule_blocks()


def test_the_parser_sees_every_script_rule() -> None:
    found = script_rules()
    train = found[RULES / "tokenizers.smk", "train_tokenizer"]
    assert train == "tokstudy.workflow.cell_job:train_cell"
    sizes = found[RULES / "tokenizers.smk", "train_tokenizer_sizes"]  # under an if
    assert sizes == "tokstudy.workflow.cell_job:train_cell_sizes"
    tables = found[RULES / "metrics.smk", "metric_tables"]
    assert tables == "tokstudy.report.tables:write_wide_tables"
    assert found[RULES / "nmt.smk", "nmt_train"] == "tokstudy.nmt.runs:train"
    assert found[RULES / "models.smk", "train_clm"] == TASKS["clm"].run  # the registry's
    assert (
        found[RULES / "report.smk", "study_page"] == "tokstudy.report.page.build:write_study_page"
    )
    parity = found[RULES / "analyses/parity.smk", "tokenization_parity"]
    assert parity == "tokstudy.analyses.parity.tables:write_parity"
    scripts = sum(text.count("script:") for text in map(Path.read_text, rule_files()))
    assert len(found) == scripts


def test_every_rule_names_a_library_function_and_no_step_module_is_left() -> None:
    named = script_rules()
    assert not {f"{smk.name}: rule {rule}": t for (smk, rule), t in named.items() if ":" not in t}
    assert not list((SOURCE / "tokstudy").rglob("steps.py"))


#: planner methods a rule unpacks into its entries, and the names they give
#: (tests/test_study_planners.py and tests/test_study.py check what they return)
SPLATTED = {
    "**parity_plan.texts()": ("reference_text", "target_text"),
    "**multilingual_plan.sampling()": ("temperature", "seed", "total_lines"),
}


#: the planner classes whose path patterns a rule names as ``<prefix>.CONSTANT``
PATTERN_OWNERS = {
    "nmt_plan": NMTPlanner,
    "planners.nmt": NMTPlanner,
    "planners.tokenizers": TokenizersPlanner,
}


def rule_wildcards(block: str) -> set[str]:
    """The wildcards of a rule's text: ``"{name}"`` written out, and those of the path
    patterns it names as planner constants (``nmt_plan.RUN_CELL``) or as ``CELL``."""
    found = set(re.findall(r'"\{(\w+)\}"', block))
    if re.search(r"[^.\w]CELL\b", block):
        found |= set(re.findall(r"\{(\w+)\}", CELL))
    for prefix, owner in PATTERN_OWNERS.items():
        for constant in re.findall(rf"\b{re.escape(prefix)}\.([A-Z_]+)\b", block):
            found |= set(re.findall(r"\{(\w+)\}", getattr(owner, constant)))
    return found


def rule_entries(block: str) -> set[str]:
    """The names a rule's text gives under ``input:``, ``output:`` and ``params:``."""
    names, section = set(), None
    for line in block.splitlines():
        if heading := re.match(r"^ {4}(\w+):", line):
            section = heading.group(1)
        elif section in ("input", "output", "params") and (entry := re.match(r"^ {8}(\w+)=", line)):
            names.add(entry.group(1))
    return names


def test_every_bound_rule_gives_its_function_each_parameter_by_name() -> None:
    """The function a rule names exists, says what it does, and each parameter it needs is
    a key of the rule's input, output or params (``name=``), a wildcard (``{name}`` in its
    log path, or in a planner's pattern it names) or one the binder gives (``threads``,
    ``code``, ``outputs``, ``checkpoint_root``)."""
    missing = []
    for (smk, rule), (target, block) in bound_rules().items():
        function = imported_function(target)
        assert function.__doc__, target
        typing.get_type_hints(function)  # the binder converts by the annotations
        splatted = {name for call, names in SPLATTED.items() if call in block for name in names}
        wildcards = rule_wildcards(block)
        entries = rule_entries(block)
        twice = sorted(entries & wildcards & set(inspect.signature(function).parameters))
        missing += [f"{smk.name}: {rule}: {name!r} is an entry and a wildcard" for name in twice]
        for name, parameter in inspect.signature(function).parameters.items():
            given = re.search(rf"^\s+{name}=", block, re.M) or name in wildcards or name in splatted
            if parameter.default is inspect.Parameter.empty and not (
                given or name in (*JOB_VALUES, "outputs")
            ):
                missing.append(f"{smk.name}: rule {rule}: {target} needs {name!r}")
    assert not missing


def test_the_dispatcher_is_the_only_script() -> None:
    assert [path.name for path in SCRIPTS.iterdir()] == ["run_step.py"]
    statements = ast.parse((SCRIPTS / "run_step.py").read_text(encoding="utf-8")).body
    assert [ast.unparse(s) for s in statements[1:]] == [
        "from tokstudy.workflow.dispatch import run_named_step",
        "run_named_step(snakemake)",
    ]


def _imports(path: Path) -> set[str]:
    """Every module a source file imports, anywhere in it (absolute names)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            names |= {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_the_library_never_imports_the_dispatcher_or_the_binder() -> None:
    importers = [
        str(path.relative_to(REPO))
        for path in sorted(SOURCE.rglob("*.py"))
        if path not in CALLERS.values() and _imports(path) & set(CALLERS)
    ]
    assert not importers


def test_the_dispatcher_and_the_binder_never_import_snakemake() -> None:
    importers = [
        path.name
        for path in sorted(CALLERS.values())
        if any(name.split(".")[0] == "snakemake" for name in _imports(path))
    ]
    assert not importers


def _step(name: str) -> dict[str, str]:
    """The params ``step()`` of ``workflow/rules/common.smk`` gives a rule."""
    return {"step": name, "code": code_fingerprint(name)}


def _snakemake(tmp_path: Path, **fields: object) -> SimpleNamespace:
    """A stand-in for Snakemake's ``snakemake`` object, on its own file containers."""
    containers = {
        name: Namedlist(fromdict=value) if isinstance(value, dict) else Namedlist(value)
        for name, value in {"wildcards": {}, **fields}.items()
        if name in ("input", "output", "params", "wildcards")
    }
    return SimpleNamespace(threads=1, log=Namedlist([str(tmp_path / "rule.log")]), **containers)


#: the planner's source settings of a language read from text files
TEXT_SOURCE = {"format": "text", "field": "text", "dataset": None}


#: what rule ``prepare_corpus`` runs
PREPARE = "tokstudy.corpora.prepare:prepare_language"


def test_prepare_corpus_reads_the_rule_and_logs(tmp_path: Path) -> None:
    raw = tmp_path / "raw.txt"
    raw.write_text("".join(f"line {i}\n" for i in range(20)) + "\n   \n", encoding="utf-8")
    outputs = {name: str(tmp_path / name) for name in ("train", "heldout", "stats")}
    run_named_step(
        _snakemake(
            tmp_path,
            input={"files": [str(raw)]},
            output=outputs,
            params={
                "settings": {"heldout": 5, "seed": 1, "source": TEXT_SOURCE},
                **_step(PREPARE),
            },
            wildcards={"language": "xx"},
        )
    )
    train = Path(outputs["train"]).read_text(encoding="utf-8").splitlines()
    heldout = Path(outputs["heldout"]).read_text(encoding="utf-8").splitlines()
    assert (len(train), len(heldout)) == (15, 5)
    assert sorted(train + heldout) == sorted(f"line {i}" for i in range(20))
    # 22 lines read, the 2 blank ones dropped, 5 of the 20 held out
    stats = json.loads(Path(outputs["stats"]).read_text(encoding="utf-8"))
    text_bytes = sum(len(f"line {i}\n") for i in range(20))
    assert stats == {
        "lines_read": 22,
        "empty_dropped": 2,
        "lines_kept": 20,
        "shards": [
            {
                "shard": str(raw),
                "records_read": 22,
                "bytes_read": text_bytes - 20 + 3,
                "read_to_end": True,
            }
        ],
        "take": "leading",
        "max_lines": None,
        "max_bytes": None,
        "cleaned_lines_read": 20,
        "cleaned_bytes_read": text_bytes,
        "lines_used": 20,
        "bytes_used": text_bytes,
        "heldout_lines": 5,
        "train_lines": 15,
        "invalid_lines_replaced": 0,
        "nul_lines_replaced": 0,
        "long_lines_split": 0,
        "long_line_pieces": 0,
        "max_line_bytes": 4096,  # the default limit
        "normalize": "none",  # the default: the text as it is
        "normalized_lines": 0,
        "normalized_chars_changed": 0,
        "code": {"step": PREPARE, "fingerprint": code_fingerprint(PREPARE)},
    }
    log = (tmp_path / "rule.log").read_text(encoding="utf-8")
    assert "prepare_language: started" in log and "prepare_language: finished" in log


#: what the multilingual and NMT tokenizers' rules run
TRAIN_ONLY = "tokstudy.tokenizers.build:train_to_directory"


@pytest.mark.parametrize("cell", [True, False], ids=["study cell", "folder only"])
def test_a_study_cell_is_scored_a_plain_tokenizer_only_trained(tmp_path: Path, cell: bool) -> None:
    """Rule ``train_tokenizer`` (a study cell: trained and scored) and the rules of the
    multilingual and NMT tokenizers (trained only), run by the dispatcher as a job would."""
    lines = [f"word{i % 7} and more words {i}" for i in range(60)]
    inputs = {"train": str(write_lines(tmp_path / "train.txt", lines[:50]))}
    inputs["heldout"] = str(write_lines(tmp_path / "heldout.txt", lines[50:]))
    folder = str(tmp_path / "results" / "tokenizer")
    scores = {name: str(tmp_path / "results" / name) for name in ("metrics", "frequencies")}
    outputs = {"out_dir": folder, **scores, "cost": str(tmp_path / "results" / "cost.json")}
    spec = {"vocab_size": None, "params": {}, "seed": 0, "size_policy": "error", "label": "xx"}
    target = "tokstudy.workflow.cell_job:train_cell" if cell else TRAIN_ONLY
    run_named_step(
        _snakemake(
            tmp_path,
            input=inputs,
            output=outputs if cell else {"out_dir": folder},
            params={"spec": spec, "training_code": "t1", **_step(target)},
            wildcards={"tokenizer": "char"},
        )
    )
    written = sorted(path.name for path in (tmp_path / "results").iterdir())
    expected = ["cost.json", "frequencies", "metrics", "tokenizer"] if cell else ["tokenizer"]
    assert written == expected
    assert {p.name for p in Path(folder).iterdir()} >= {"vocab.tsv", "meta.json"}
    meta = json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))
    assert meta["code"]["step"] == target
    assert len(meta["code"]["fingerprint"]) == 16
    if cell:
        metrics = pd.read_csv(scores["metrics"], sep="\t")
        assert sorted(set(metrics["split"])) == ["heldout", "train"]


def test_plot_frequencies_gives_each_language_its_own_tokenizers_frequencies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = []
    monkeypatch.setattr(
        "tokstudy.report.plots.plot_frequencies",
        lambda frequencies, language, size, skip, files: drawn.append(
            (language, {label: values.tolist() for label, values in frequencies.items()}, files)
        ),
    )
    tables = []
    for index, counts in enumerate([[5, 1], [7, 2], [9, 3]]):
        rows = [f"{i}\tt{i}\t{count}\t0" for i, count in enumerate(counts)]
        header = "id\ttoken\ttrain_frequency\theldout_frequency"
        tables.append(str(write_lines(tmp_path / f"f{index}.tsv", [header, *rows])))
    outputs = {
        f"{language}_{ext}": f"{language}.{ext}" for language in "ab" for ext in ("png", "pdf")
    }
    plots = {"a": ["sp_bpe", "gpt (pretrained)"], "b": ["sp_bpe"]}
    run_named_step(
        _snakemake(
            tmp_path,
            input={"tables": tables},
            output=outputs,
            params={
                "plots": plots,
                "vocab_size": "750",
                "skip_top": 1,
                **_step("tokstudy.report.plots:plot_language_frequencies"),
            },
        )
    )
    assert drawn == [
        ("a", {"sp_bpe": [5, 1], "gpt (pretrained)": [7, 2]}, [Path("a.png"), Path("a.pdf")]),
        ("b", {"sp_bpe": [9, 3]}, [Path("b.png"), Path("b.pdf")]),
    ]


def test_a_failing_step_exits_with_one_line_and_logs_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.tsv"
    with pytest.raises(SystemExit) as exit_info:
        run_named_step(
            _snakemake(
                tmp_path,
                input={"metric_files": [str(missing)]},
                output={"table": str(tmp_path / "metrics.csv")},
                params=_step("tokstudy.report.tables:write_collected"),
            )
        )
    message = str(exit_info.value)
    assert message.startswith("error: ") and "\n" not in message
    assert str(missing) in message
    assert "failed" in (tmp_path / "rule.log").read_text(encoding="utf-8")
    assert not (tmp_path / "metrics.csv").exists()


@pytest.mark.parametrize(
    ("task", "inputs", "expected"),
    [
        ("pos", {"treebank": "tb"}, ("finetune_pos", {"treebank"})),
        (
            "sentence",
            {"tsv_train": "a.tsv", "tsv_test": "b.tsv"},
            ("finetune_sentence", {"tsv"}),
        ),
        (
            "sentence",
            {"treebank": "tb"},
            ("finetune_sentence", {"treebank", "feature", "upos"}),
        ),
    ],
)
def test_finetune_model_dispatches_on_the_task_and_its_data(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    task: str,
    inputs: dict[str, str],
    expected: tuple[str, set[str]],
) -> None:
    import torch

    from tokstudy.models import tasks

    calls = []

    def recorder(name: str):
        def record(model_dir, tokenizer_dir, *args, **kwargs):
            calls.append((name, model_dir, tokenizer_dir, args, kwargs))

        record.__name__ = name
        return record

    for name in ("finetune_pos", "finetune_sentence"):
        monkeypatch.setattr(tasks, name, recorder(name))
    monkeypatch.setattr(torch, "set_num_threads", lambda threads: None)
    run_named_step(
        _snakemake(
            tmp_path,
            input={**inputs, "tokenizer_dir": "tok", "pretrained": "run/pretrain"},
            output={"metrics": "run/task/metrics.tsv"},
            params={
                **_step("tokstudy.models.tasks:finetune_task"),
                "model_dir": "run/pretrain/model",
                "config": {},
                "noise_levels": [10],
                "noise_seed": 3,
                "noise_word_fraction": 0.5,
                "sentence_feature": "Tense=Past",
                "sentence_upos": ["VERB"],
            },
            wildcards={"task": task},
        )
    )
    [(name, model_dir, tokenizer_dir, args, kwargs)] = calls
    step, data_options = expected
    assert name == step and (model_dir, tokenizer_dir) == (
        Path("run/pretrain/model"),
        Path("tok"),
    )
    assert args[0] == Path("run/task")
    noise = {"noise_levels": [10], "noise_seed": 3, "noise_word_fraction": 0.5}
    assert set(kwargs) == set(noise) | data_options
    assert {key: kwargs[key] for key in noise} == noise
    if "treebank" in kwargs:
        assert kwargs["treebank"] == Path("tb")
    if "tsv" in kwargs:
        assert kwargs["tsv"] == {"train": Path("a.tsv"), "test": Path("b.tsv")}
