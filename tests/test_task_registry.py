"""The task registry is the one list of downstream tasks: settings, schema, planner and
model families read it."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tokstudy.errors import TokstudyError
from tokstudy.models import task_registry
from tokstudy.models.config import ModelsConfig, from_mapping
from tokstudy.models.task_registry import TASKS, Score, Task
from tokstudy.workflow.models.finetune_plan import FinetunePlanner
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def test_the_schema_enum_lists_the_registered_tasks() -> None:
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    enum = schema["properties"]["models"]["properties"]["tasks"]["items"]["enum"]
    assert sorted(enum) == sorted(TASKS)


def test_every_task_function_exists_and_every_score_has_a_direction() -> None:
    for task in TASKS.values():
        assert callable(task.function()), task.name
        assert all(isinstance(score.higher_is_better, bool) for score in task.scores)
    scores = task_registry.scores()
    assert scores["clm"][0].metric == "bits_per_byte"
    assert not scores["clm"][0].higher_is_better and scores["clm"][0].comparable_across_tokenizers
    assert not any(s.comparable_across_tokenizers for s in scores["mlm"])
    assert "noise" not in scores


def test_a_registered_task_is_a_setting_choice_and_a_finetune_wildcard(
    monkeypatch, tmp_path: Path
) -> None:
    toy = Task(
        "toy",
        "finetune",
        ("treebank", "silver_pos"),
        "tokstudy.models.tasks:finetune_pos",
        (Score("accuracy", True, True),),
        planner="tokstudy.workflow.models.finetune_plan:FinetunePlanner",
        head="token",
    )
    monkeypatch.setitem(TASKS, "toy", toy)
    assert from_mapping(ModelsConfig, {"tasks": ["toy"]}).tasks == ("toy",)
    planner = _finetune_plan(tmp_path, "de", tasks=["toy"])
    assert planner.finetune_task_pattern().split("|") == ["pos", "sentence", "toy"]
    assert planner.asked() == ["toy"] and planner.summary_tables() == ["bootstrap"]
    assert "toy" in task_registry.tasks_reading("silver_pos")
    with pytest.raises(TokstudyError, match=r"models\.tasks must be one of clm, mlm, noise, pos, "):
        from_mapping(ModelsConfig, {"tasks": ["nope"]})


def _finetune_plan(tmp_path: Path, language: str, **models: object) -> FinetunePlanner:
    """The fine-tuning planner of a one-language study without UD treebanks."""
    study = Study(_finetune_config(language, **models), tmp_path)
    return StudyPlan(study).models.kind_planner("finetune")


def _finetune_config(language: str, **models: object) -> dict[str, object]:
    """A one-language study of the char tokenizer with a models section."""
    return {
        "languages": {language: {"chatterbot": "german"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "results_dir": "res",
        "models": {"languages": [language], "tokenizers": ["char"], **models},
    }


@pytest.mark.parametrize(
    ("language", "task", "instead"),
    [
        ("en", "pos", "silver POS labels, which exist only for German ('de')"),
        ("de", "sentence", "models.sentence_tsv.de"),
    ],
)
def test_a_language_without_a_treebank_names_what_its_task_may_read_instead(
    tmp_path: Path, language: str, task: str, instead: str
) -> None:
    message = (
        f"config key models.treebanks.{language} is missing: task {task} needs a UD treebank "
        f"(or {instead})"
    )
    with pytest.raises(TokstudyError, match=re.escape(message)):
        _finetune_plan(tmp_path, language, tasks=[task])


def test_the_registered_alternatives_stand_in_for_a_treebank(tmp_path: Path) -> None:
    silver = _finetune_plan(tmp_path, "de", tasks=["pos"])
    assert silver.treebank_folder("de") is None
    assert silver.finetune_data(SimpleNamespace(task="pos", language="de")) == {
        "treebank": "res/models/treebanks/de/silver"
    }
    (tmp_path / "train.tsv").write_text("text\tlabel\nein Satz\tyes\n", encoding="utf-8")
    (tmp_path / "test.tsv").write_text("text\tlabel\nnoch einer\tno\n", encoding="utf-8")
    tsv = {"de": {"train": "train.tsv", "test": "test.tsv"}}
    user = _finetune_plan(tmp_path, "de", tasks=["pos", "sentence"], sentence_tsv=tsv)
    assert user.finetune_data(SimpleNamespace(task="sentence", language="de")) == {
        "tsv_train": str(tmp_path / "train.tsv"),
        "tsv_test": str(tmp_path / "test.tsv"),
    }


@pytest.mark.parametrize(
    ("kind", "planner"),
    [("finetune", ""), ("from_scratch", ""), ("modifier", "tokstudy.x:Planner")],
)
def test_a_task_has_a_planner_unless_it_modifies_the_others(kind: str, planner: str) -> None:
    with pytest.raises(ValueError, match=f"a {kind} task with planner"):
        Task("toy", kind, (), "tokstudy.models.tasks:finetune_pos", (), planner=planner)


_MLM_RULES = ("pretokenize_mlm", "pretrain_mlm")


@pytest.mark.parametrize(
    ("tasks", "rules", "tables"),
    [
        (["mlm"], [*_MLM_RULES, "evaluate_mlm"], []),
        (["pos"], [*_MLM_RULES, "finetune_model"], ["bootstrap"]),
        (["clm", "noise"], ["pretokenize_mlm", "train_clm", "evaluate_clm"], ["clm"]),
        (
            ["clm", "pos", "mlm"],
            [*_MLM_RULES, "evaluate_mlm", "finetune_model", "train_clm", "evaluate_clm"],
            ["bootstrap", "clm"],
        ),
    ],
)
def test_the_task_planners_say_which_rules_and_tables_the_asked_tasks_use(
    tmp_path: Path, tasks: list[str], rules: list[str], tables: list[str]
) -> None:
    plan = StudyPlan(Study(_finetune_config("de", tasks=tasks), tmp_path)).models
    assert plan.rules() == rules
    assert plan.summary_tables() == ["seed_summary", "wilcoxon", "flagged_runs", *tables]
    assert {TASKS[task].planner.split(":")[1] for task in tasks if task != "noise"} == {
        type(plan.planner(task)).__name__ for task in tasks if task != "noise"
    }
    assert plan.kind_planner("finetune").asked() == [task for task in ("pos",) if task in tasks]
    scored = {keys["task"] for keys in plan.score_files().values()}
    assert scored == set(tasks) - {"noise"}  # a modifier has no files of its own
