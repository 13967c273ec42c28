"""The extension points hold: in a copy of the project, a toy analysis (one folder of the
workflow wing, its function in the library, one ``ANALYSES`` line, its schema entry, one
``include:``), a toy downstream
task (one module, one ``TASKS`` line, its name in the schema's ``models.tasks``), a toy
metric (one function, one ``METRICS`` line, its name in the schema's ``metrics``) and a toy
tokenizer (one adapter module, one ``ADAPTERS`` entry) are planned by a dry run of a study
that enables them, with nothing else edited (docs/architecture.md's "Add …" rows)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import write_lines
from workflow_support import copy_project, project_env, snakemake

TOY_PLAN = """
from tokstudy.workflow.analyses.base import AnalysisPlanner


class ToyPlanner(AnalysisPlanner):
    TOY = "tables/analysis/toy_{language}.csv"

    def targets(self):
        languages = self.study.languages if self.section.get("toy") else []
        return [self.study.out(self.TOY, language=language) for language in languages]
"""
TOY_TABLE = '''
from pathlib import Path


def toy_table(heldout: Path, table: Path) -> None:
    """Lines of a language's held-out text."""
    lines = len(heldout.read_text().splitlines())
    table.write_text(f"lines\\n{lines}\\n")
'''
TOY_RULES = """
toy_plan = planners.analyses["toy"]


rule toy_table:
    input:
        heldout=out(planners.corpora.HELDOUT),
    output:
        table=out(toy_plan.TOY),
    params:
        **step("tokstudy.analyses.toy.tables:toy_table"),
    log:
        out(log_path("toy_table", "{language}")),
    threads: planners.threads("toy_table")
    resources:
        **planners.resources("toy_table"),
    script:
        RUN_STEP
"""
TOY_TASK = '''
def finetune_toy(model, tokenizer, output, settings, **data):
    """A toy fine-tuning task: never run by a dry run."""
    raise NotImplementedError
'''
TOY_TOKENIZER = '''
from tokstudy.tokenizers.adapters.char import CharTokenizer


class ToyTokenizer(CharTokenizer):
    """A toy tokenizer: the character tokenizer under another name."""

    name = "toy"
'''
TOY_METRIC = '''

def toy_metric(counts):
    """Tokens per line, twice."""
    return 2 * counts["tokens"] / counts["lines"]
'''


def _append_after(path: Path, anchor: str, text: str) -> None:
    """Insert ``text`` after the first line of ``path`` that contains ``anchor``."""
    lines = path.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if anchor in line)
    path.write_text("".join([*lines[: index + 1], text, *lines[index + 1 :]]))


def add_toy_analysis(project: Path) -> None:
    """Its computation in the library, its planner in the workflow wing, one registry line
    (and its import), a schema entry, one rule file and its include."""
    library = project / "src/tokstudy/analyses/toy"
    library.mkdir()
    (library / "__init__.py").write_text("")
    (library / "tables.py").write_text(TOY_TABLE)
    folder = project / "src/tokstudy/workflow/analyses/toy"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "plan.py").write_text(TOY_PLAN)
    registry = project / "src/tokstudy/workflow/analyses/registry.py"
    _append_after(
        registry,
        "from tokstudy.workflow.analyses.udhr.plan",
        "from tokstudy.workflow.analyses.toy.plan import ToyPlanner\n",
    )
    _append_after(
        registry,
        "ANALYSES: dict[str, Analysis] = {",
        '    "toy": Analysis(("toy",), ToyPlanner),\n',
    )
    (project / "workflow/rules/analyses/toy.smk").write_text(TOY_RULES)
    _append_after(
        project / "Snakefile",
        "workflow/rules/analyses/correlation.smk",
        'include: "workflow/rules/analyses/toy.smk"\n',
    )


def add_toy_task(project: Path) -> None:
    """One module and one TASKS line."""
    (project / "src/tokstudy/models/toy_task.py").write_text(TOY_TASK)
    line = (
        '            Task("toy", "finetune", ("treebank",),'
        ' "tokstudy.models.toy_task:finetune_toy",'
        ' (Score("toy_accuracy", True, True),), planner=_FINETUNE_PLANNER,'
        ' head="sequence"),\n'
    )
    registry = project / "src/tokstudy/models/task_registry.py"
    text = registry.read_text()
    registry.write_text(text.replace("            Task(\n", line + "            Task(\n", 1))


def add_toy_tokenizer(project: Path) -> None:
    """One adapter module and one ADAPTERS entry."""
    (project / "src/tokstudy/tokenizers/adapters/toy.py").write_text(TOY_TOKENIZER)
    _append_after(
        project / "src/tokstudy/tokenizers/registry.py",
        "ADAPTERS: dict[str, Registered] = {",
        '    "toy": Registered("tokstudy.tokenizers.adapters.toy:ToyTokenizer", "toy", 1.0, '
        '"#000000"),\n',
    )


def add_toy_metric(project: Path) -> None:
    """One function and one METRICS line."""
    metrics = project / "src/tokstudy/metrics/compute.py"
    text = metrics.read_text().replace(
        "\nMETRICS: dict[str, Metric] = {", TOY_METRIC + "\nMETRICS: dict[str, Metric] = {", 1
    )
    metrics.write_text(text)
    _append_after(
        metrics,
        "METRICS: dict[str, Metric] = {",
        '    "toy_metric": Metric(toy_metric, ("tokens", "lines")),\n',
    )


def add_schema_entries(project: Path) -> None:
    """The three names in the schema (it checks shapes and names; the registries are the
    lists the code reads)."""
    path = project / "workflow/schemas/config.schema.yaml"
    schema = yaml.safe_load(path.read_text())
    properties = schema["properties"]
    properties["analyses"]["properties"]["toy"] = {"type": "boolean"}
    properties["metrics"]["items"]["enum"].append("toy_metric")
    properties["models"]["properties"]["tasks"]["items"]["enum"].append("toy")
    path.write_text(yaml.safe_dump(schema, sort_keys=False, allow_unicode=True))


@pytest.mark.slow
def test_a_toy_analysis_task_metric_and_tokenizer_are_planned_through_the_registries(
    tmp_path: Path,
) -> None:
    project = copy_project(tmp_path / "project")
    add_toy_analysis(project)
    add_toy_task(project)
    add_toy_metric(project)
    add_toy_tokenizer(project)
    add_schema_entries(project)
    data = tmp_path / "data"
    ud = data / "ud" / "UD_Xx-Toy"
    ud.mkdir(parents=True)
    write_lines(
        ud / "xx_toy-ud-train.conllu", ["# text = a", "1\ta\ta\tX\t_\t_\t0\troot\t_\t_", ""]
    )
    config = {
        "results_dir": str(tmp_path / "res"),
        "languages": {"xx": {"path": str(write_lines(data / "xx.txt", ["a b", "c d"] * 10))}},
        "tokenizers": {"char": {}, "toy": {}},
        "metrics": ["mu", "toy_metric"],
        "analyses": {"toy": True},
        "models": {
            "languages": ["xx"],
            "tokenizers": ["char"],
            "tasks": ["toy"],
            "ud_root": str(data / "ud"),
            "treebanks": {"xx": "UD_Xx-Toy"},
        },
    }
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(config))
    result = snakemake(
        tmp_path,
        "-n",
        "--forceall",
        config=path,
        env=project_env(project),
        snakefile=project / "Snakefile",
    )
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    planned = result.stdout
    assert re.search(r"^rule toy_table:", planned, re.M)
    assert f"{tmp_path}/res/tables/analysis/toy_xx.csv" in planned
    jobs = re.split(r"^(?=(?:local)?rule )", planned, flags=re.M)  # one block per planned job
    assert any(job.startswith("rule finetune_model:") and "task=toy" in job for job in jobs)
    assert f"{tmp_path}/res/plots/metrics/toy_metric_heldout.png" in planned
    assert any(job.startswith("rule train_tokenizer:") and "tokenizer=toy" in job for job in jobs)
