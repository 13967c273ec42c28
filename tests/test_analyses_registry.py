"""The analyses registry is the one list of analyses: the schema, the plan, the rule files
and the functions they name agree with it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml
from conftest import REPO, write_lines

from tokstudy.workflow.analyses.base import AnalysisPlanner
from tokstudy.workflow.analyses.registry import ANALYSES
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
SECTION = SCHEMA["properties"]["analyses"]
RULES = REPO / "workflow/rules/analyses"


def _schema_entry(key: tuple[str, ...]) -> dict[str, Any]:
    entry = SECTION
    for part in key:
        entry = entry["properties"][part]
    return entry


def test_every_schema_key_of_analyses_is_an_analysis_and_back() -> None:
    top = {analysis.key[0] for analysis in ANALYSES.values()}
    assert set(SECTION["properties"]) == top
    assert SECTION["additionalProperties"] is False  # an unregistered key is refused
    for name, analysis in ANALYSES.items():
        assert _schema_entry(analysis.key), name


def test_an_analysis_with_typed_settings_is_checked_by_them_alone() -> None:
    # one check per value (issue 58): the schema names the settings class and leaves its
    # keys to it; the planner builds it before the first job (tests/test_binder.py)
    for name, analysis in ANALYSES.items():
        if analysis.settings is None:
            continue
        entry = _schema_entry(analysis.key)
        assert "properties" not in entry and "additionalProperties" not in entry, name
        settings = analysis.settings
        assert f"{settings.__module__}.{settings.__name__}" in " ".join(
            entry["description"].split()
        ), name
        assert dataclasses.fields(settings), name


def test_each_analysis_has_its_folder_rule_file_and_include() -> None:
    snakefile = (REPO / "Snakefile").read_text()
    assert sorted(path.stem for path in RULES.glob("*.smk")) == sorted(ANALYSES)
    for name, analysis in ANALYSES.items():
        assert f'include: "workflow/rules/analyses/{name}.smk"' in snakefile
        assert issubclass(analysis.planner, AnalysisPlanner)
        assert analysis.planner.__module__ == f"tokstudy.workflow.analyses.{name}.plan"
        assert f'planners.analyses["{name}"]' in (RULES / f"{name}.smk").read_text()


def test_the_plan_has_one_planner_per_analysis_in_registry_order(tmp_path: Path) -> None:
    config = {
        "results_dir": "res",
        "languages": {"xx": {"path": str(write_lines(tmp_path / "xx.txt", ["a b"]))}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "analyses": {"segmentation": {"vocab_size": 5, "words": {"xx": ["ab"]}}},
    }
    plan = StudyPlan(Study(config))
    assert list(plan.analyses) == list(ANALYSES)
    for name, analysis in ANALYSES.items():
        assert type(plan.analyses[name]) is analysis.planner
    assert plan.analyses.targets() == [
        "res/tables/analysis/segmentation_xx.csv",
        "res/tables/analysis/segmentation_xx.md",
    ]
