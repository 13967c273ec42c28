"""The binder: a library function gets the rule's entries of its parameters' names, each
in its annotated type; mismatches are one line naming the function and the name; the
dispatcher runs a ``module:function`` through it, logging to the rule's log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
import yaml
from conftest import REPO
from snakemake.iocontainers import Namedlist
from test_morphscore import WORDS, write_treebank
from workflow_support import snakemake

from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.models.config import ClmConfig, EvalConfig, FinetuneConfig, PretrainConfig
from tokstudy.nmt.config import TrainConfig as NmtTrainConfig
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.training.config import from_mapping, to_dict
from tokstudy.workflow.binder import bound_arguments, converted
from tokstudy.workflow.dispatch import run_named_step
from tokstudy.workflow.plan import plan_study


@dataclass(frozen=True)
class Settings:
    """A typed settings section."""

    rate: float = 0.5
    name: str = "x"


def write_report(
    table: Path,
    tables: Sequence[Path],
    keyed: Mapping[str, Path],
    pairs: Mapping[tuple[str, int], tuple[Path, Path]],
    settings: Settings,
    language: str,
    threads: int,
    outputs: Sequence[Path],
    optional: Path | None,
    extra: Any = "kept",
) -> dict[str, Any]:
    """Every kind of parameter the binder fills."""
    return dict(locals())


def job(tmp_path: Path, **containers: Any) -> SimpleNamespace:
    """A stand-in for Snakemake's ``snakemake`` object: named containers as Snakemake
    builds them."""
    fields = {"input": {}, "output": {}, "params": {}, "wildcards": {}, **containers}
    named = {name: Namedlist(fromdict=value) for name, value in fields.items()}
    return SimpleNamespace(threads=3, log=Namedlist([str(tmp_path / "rule.log")]), **named)


def full_job(tmp_path: Path, **params: Any) -> SimpleNamespace:
    return job(
        tmp_path,
        input={"table": "t.csv", "tables": ["a.csv", "b.csv"], "optional": [], "unused": "u"},
        output={"png": "p.png", "pdf": "p.pdf"},
        params={
            "keyed": {"en": "en.txt"},
            "pairs": {("bpe", 1000): ("r", "t")},
            "settings": {"rate": 0.25},
            "step": "tests:write_report",
            "code": "abc",
            **params,
        },
        wildcards={"language": "fi"},
    )


def test_each_parameter_gets_the_entry_of_its_name_in_its_type(tmp_path: Path) -> None:
    bound = bound_arguments(write_report, full_job(tmp_path))
    assert bound == {
        "table": Path("t.csv"),
        "tables": [Path("a.csv"), Path("b.csv")],
        "keyed": {"en": Path("en.txt")},
        "pairs": {("bpe", 1000): (Path("r"), Path("t"))},
        "settings": Settings(rate=0.25),
        "language": "fi",
        "threads": 3,
        "outputs": [Path("p.png"), Path("p.pdf")],
        "optional": None,  # an empty optional input
    }  # "unused" is left to Snakemake, "extra" keeps its default
    assert bound_arguments(lambda outputs, code: None, full_job(tmp_path)) == {
        "outputs": ["p.png", "p.pdf"],  # no annotation: as Snakemake gives them
        "code": {"step": "tests:write_report", "fingerprint": "abc"},
    }


def by_name(outputs: Mapping[str, Path]) -> None:
    """Outputs by name."""


def test_outputs_by_name_where_the_parameter_is_a_mapping(tmp_path: Path) -> None:
    assert bound_arguments(by_name, full_job(tmp_path)) == {
        "outputs": {"png": Path("p.png"), "pdf": Path("p.pdf")}
    }


def test_a_single_path_where_paths_are_annotated_is_a_list_of_one() -> None:
    assert converted(Sequence[Path], "a.txt", "x") == [Path("a.txt")]
    assert converted(tuple[Path, ...], ["a", "b"], "x") == (Path("a"), Path("b"))
    assert converted(tuple[Path, int], ["a", 2], "x") == (Path("a"), 2)
    assert converted(Path | None, "", "x") is None
    assert converted(Path | None, "a", "x") == Path("a")


def score(seed: int, runs: Mapping[Path, Mapping[str, Any]], checkpoint_root: Path) -> None:
    """A wildcard's digits as an integer, paths as mapping keys, a training job's root."""


def test_wildcard_digits_path_keys_and_a_training_jobs_checkpoint_root(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints" / "run"
    rule = job(
        tmp_path,
        params={"runs": {"a/m.tsv": {"seed": "1"}}, "checkpoints": str(root), "code": "c1"},
        wildcards={"seed": "07"},
    )
    assert bound_arguments(score, rule) == {
        "seed": 7,
        "runs": {Path("a/m.tsv"): {"seed": "1"}},
        "checkpoint_root": root,
    }
    # the root is made and stamped with the job's code (tokstudy.workflow.training_state)
    assert root.is_dir() and (root / "code.json").read_text(encoding="utf-8") == '"c1"\n'
    rule.wildcards = Namedlist(fromdict={"seed": "x1"})
    with pytest.raises(TokstudyError, match=r"test_binder:score: seed: expected an integer"):
        bound_arguments(score, rule)


def uses_torch(threads: int) -> int:
    """The job's cores and torch's threads."""
    import torch

    return threads, torch.get_num_threads()


def test_a_job_that_imported_torch_computes_on_the_jobs_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    seen = []
    monkeypatch.setattr(torch, "set_num_threads", seen.append)
    rule = job(tmp_path, params={"step": "test_binder:uses_torch", "code": "0"})
    run_named_step(rule)
    assert seen == [3]  # the job's threads


def test_bad_settings_are_one_line_naming_the_function_and_the_key(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=r"write_report: settings: unknown key\(s\) rat\b"):
        bound_arguments(write_report, full_job(tmp_path, settings={"rat": 1}))


def test_a_name_in_two_places_or_in_none_is_one_line(tmp_path: Path) -> None:
    twice = full_job(tmp_path, table="again.csv")
    with pytest.raises(TokstudyError, match=r"write_report: 'table' is both a rule's input and"):
        bound_arguments(write_report, twice)
    missing = job(tmp_path, input={"table": "t.csv"})
    with pytest.raises(TokstudyError, match=r"parameter 'tables' is no input, output, param or"):
        bound_arguments(write_report, missing)


def test_the_dispatcher_runs_a_named_function_through_the_binder(tmp_path: Path) -> None:
    out = tmp_path / "lines.txt"
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n", encoding="utf-8")
    step = "tokstudy.files.lines:read_text_lines"  # a library function of one path parameter
    rule = job(tmp_path, input={"path": str(source)}, params={"step": step, "code": "0"})
    run_named_step(rule)
    log = (tmp_path / "rule.log").read_text(encoding="utf-8")
    assert "read_text_lines: started" in log and "read_text_lines: finished" in log
    bad = job(tmp_path, input={"paths": str(out)}, params={"step": step, "code": "0"})
    with pytest.raises(SystemExit, match=r"error: tokstudy.files.lines:read_text_lines: parameter"):
        run_named_step(bad)


@pytest.mark.slow
def test_analysis_rules_run_their_library_functions_through_the_binder(tmp_path: Path) -> None:
    """A study whose analyses run for real: each rule's files, params and wildcards reach its
    function under the parameters' names (the other analyses run in their own workflow
    tests: parity, UDHR, multilingual, segmentation, correlation)."""
    write_treebank(tmp_path / "ud", "English-Toy", "en", WORDS)
    config = tmp_path / "study.yaml"
    analyses = {
        "numbers": {"per_length": 2},
        "robustness": {"sentences": 5},
        "morphscore": {"ud_root": str(tmp_path / "ud")},
    }
    study = {
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "analyses": analyses,
    }
    config.write_text(yaml.safe_dump(study), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    tables, plots = tmp_path / "results/tables/analysis", tmp_path / "results/plots/analysis"
    numbers = pd.read_csv(tables / "numbers.csv").set_index("source")
    for digits in (1, 2, 3, 4):  # the char tokenizer: one token per digit
        assert numbers.loc[f"generated_plain_{digits:02d}_digits", "tokens_per_number"] == digits
    robustness = pd.read_csv(tables / "robustness.csv")
    assert set(robustness["sentences"]) == {5} and len(robustness["perturbation"].unique()) > 1
    morphscore = pd.read_csv(tables / "morphscore.csv")
    assert sorted(morphscore["encoding"]) == ["alone", "in_context"]
    for name in ("numbers_tokens", "robustness_heatmap", "morphscore_heatmap"):
        assert (plots / f"{name}.png").stat().st_size > 1000


SETTINGS_CLASSES = [
    pytest.param(lambda: ClmConfig(lr=0.002, seed=3), id="ClmConfig"),
    pytest.param(lambda: PretrainConfig(), id="PretrainConfig"),
    pytest.param(lambda: FinetuneConfig(), id="FinetuneConfig"),
    pytest.param(lambda: EvalConfig(noise_levels=(10, 20)), id="EvalConfig"),
    pytest.param(lambda: NmtTrainConfig(), id="nmt.TrainConfig"),
    pytest.param(lambda: CorrelationSettings(primary="nu_heldout"), id="CorrelationSettings"),
    pytest.param(lambda: TrainSpec(vocab_size=1000, params={"a": 1}), id="TrainSpec"),
]


@pytest.mark.parametrize("make", SETTINGS_CLASSES)
def test_settings_cross_to_the_job_as_plain_data_and_come_back_equal(make) -> None:
    settings = make()
    rebuilt = from_mapping(type(settings), to_dict(settings), "x", check=False)
    assert rebuilt == settings and type(rebuilt) is type(settings)


def test_the_job_does_not_check_again_what_the_study_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 58: one check per value; the study checked the clm settings when it planned
    # the job, the job rebuilds them from the rule's plain data without checking
    planned = to_dict(ClmConfig(lr=0.002))
    checks: list[ClmConfig] = []
    monkeypatch.setattr(ClmConfig, "__post_init__", lambda self: checks.append(self))

    def train(config: ClmConfig) -> ClmConfig:
        return config

    config = bound_arguments(train, job(tmp_path, params={"config": planned}))["config"]
    assert checks == [] and config == ClmConfig(lr=0.002)
    # a structural mismatch (a key the dataclass lacks) is still one line
    with pytest.raises(TokstudyError, match=r"train: config: unknown key\(s\) lr_max"):
        bound_arguments(train, job(tmp_path, params={"config": {**planned, "lr_max": 1}}))


def test_the_study_checks_the_correlation_settings_before_the_first_job() -> None:
    # the schema aside (plan_study is what the Snakefile runs after it): the planner
    # builds the settings once, so a bad value stops the start, not the correlation job
    config = yaml.safe_load((REPO / "config" / "models_demo.yaml").read_text("utf-8"))
    config["analyses"] = {"correlation": {"confidence": 1.5}}
    with pytest.raises(TokstudyError, match=r"analyses.correlation.confidence must be in \(0"):
        plan_study(config)
