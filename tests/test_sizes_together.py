"""``train_sizes_together``: one job trains and scores every size of one language and
tokenizer (rule ``train_tokenizer_sizes``), writing the files the per-cell jobs write."""

from __future__ import annotations

import filecmp
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from conftest import CELL_COSTS
from workflow_support import snakemake

from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study


def _plan(tmp_path: Path, **keys: Any) -> StudyPlan:
    config = {
        "languages": {
            "en": {"chatterbot": "english"},
            "de": {
                "chatterbot": "german",
                "tokenizer_params": {"sp_unigram": {"character_coverage": 0.99}},
            },
        },
        "tokenizers": {"sp_unigram": {}, "hf_bpe": {"vocab_sizes": [1000]}, "char": {}},
        "vocab_sizes": [2000, 1000],
        "metrics": ["mu"],
        "results_dir": "res",
        **keys,
    }
    return StudyPlan(Study(config, tmp_path))


def test_off_by_default_every_cell_has_its_own_job(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.tokenizers.trained_together() == []
    assert {row["step"] for row in plan.metrics.cost_sources()} == {"train", "metrics", "job"}


def test_sized_tokenizers_at_the_studys_sizes_are_trained_together(tmp_path: Path) -> None:
    tokenizers = _plan(tmp_path, train_sizes_together=True).tokenizers
    # hf_bpe has its own sizes and char none: both keep a job per cell
    assert tokenizers.trained_together() == ["sp_unigram"]
    assert tokenizers.shared_sizes() == ["1000", "2000"]
    specs = tokenizers.train_specs("de", "sp_unigram")
    assert list(specs) == ["1000", "2000"]
    assert specs["2000"]["vocab_size"] == 2000
    assert specs["2000"]["params"] == {"character_coverage": 0.99}  # de's own setting
    assert tokenizers.train_specs("en", "sp_unigram")["1000"]["params"] == {}


def test_a_together_job_is_as_long_as_its_cells(tmp_path: Path) -> None:
    table = tmp_path / "cost.csv"
    table.write_text(CELL_COSTS, encoding="utf-8")
    plan = _plan(tmp_path, train_sizes_together=True, cell_costs=str(table))
    job = SimpleNamespace(language="en", tokenizer="sp_unigram")
    # by hand: (4.5 + 1.5) + (8.0 + 2.0) CPU s, in centiseconds
    assert plan.sizes_priority(job) == 1600
    assert plan.corpus_priority(SimpleNamespace(language="en")) == 1600
    # de has no measured cell: sp_unigram's measured 0.0055 s per item (median of 6.0/1000
    # and 10.0/2000) at 1000 and at 2000 items
    estimates = [math.ceil(100 * 0.0055 * items) for items in (1000, 2000)]
    assert plan.corpus_priority(SimpleNamespace(language="de")) == sum(estimates) == 1650
    one_cell = plan.resources("train_tokenizer")["runtime"]
    assert plan.resources("train_tokenizer_sizes", cells=2)["runtime"] == 2 * one_cell


def test_a_together_job_has_one_job_row_in_the_cost_table(tmp_path: Path) -> None:
    rows = _plan(tmp_path, train_sizes_together=True).metrics.cost_sources()
    jobs = [row for row in rows if row["step"] == "job"]
    together = [row for row in jobs if row["tokenizer"] == "sp_unigram"]
    assert [(row["language"], row["size"]) for row in together] == [("de", "all"), ("en", "all")]
    assert together[1]["figures"] == "res/benchmarks/train_tokenizer_sizes/en/sp_unigram.tsv"
    # the job read its language's two texts once per size
    assert together[1]["texts"] == ["res/corpora/en/train.txt", "res/corpora/en/heldout.txt"] * 2
    english = [row for row in rows if row["language"] == "en"]
    phases = {(row["tokenizer"], row["size"], row["step"]) for row in english}
    assert ("sp_unigram", "2000", "train") in phases
    assert ("sp_unigram", "2000", "job") not in phases
    assert ("hf_bpe", "1000", "job") in phases


def _study(folder: Path, together: bool) -> Path:
    folder.mkdir(exist_ok=True)
    config = folder / "study.yaml"
    study = {
        "seed": 3,
        "languages": {"en": {"chatterbot": "english"}},
        "vocab_sizes": [250, 380],
        # deterministic trainers only (not hf_wordpiece: its adapter says why)
        "tokenizers": {"sp_bpe": {}, "hf_bpe": {}, "char": {}},
        "metrics": ["mu", "f95", "unk_rate"],
        "plots": {"frequency_vocab_size": 250, "skip_top_ranks": 10},
        "train_sizes_together": together,
    }
    config.write_text(yaml.safe_dump(study), encoding="utf-8")
    run = snakemake(folder, "--cores", "2", config=config)
    assert run.returncode == 0, run.stderr[-3000:]
    return folder / "results"


def _meta_but_code(folder: Path) -> dict[str, Any]:
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    del meta["code"]  # the step that wrote it: one rule or the other
    return meta


@pytest.mark.slow
def test_together_jobs_write_what_the_cell_jobs_write(tmp_path: Path) -> None:
    apart = _study(tmp_path / "apart", together=False)
    together = _study(tmp_path / "together", together=True)
    metrics = [(results / "tables/metrics.csv").read_bytes() for results in (apart, together)]
    assert metrics[0] == metrics[1]
    for cell in ["sp_bpe/250", "sp_bpe/380", "hf_bpe/250", "hf_bpe/380", "char/full"]:
        folders = [results / "tokenizers/en" / cell for results in (apart, together)]
        files = sorted(path.name for path in folders[0].iterdir())
        assert files == sorted(path.name for path in folders[1].iterdir()), cell
        _, differ, errors = filecmp.cmpfiles(*folders, files, shallow=False)
        # meta.json records the step that wrote it: train_tokenizer_sizes but for char
        assert differ == ([] if cell == "char/full" else ["meta.json"]) and not errors, cell
        assert _meta_but_code(folders[0]) == _meta_but_code(folders[1]), cell
    log = (together / "logs/train_tokenizer_sizes/en/sp_bpe.log").read_text(encoding="utf-8")
    assert "size 250 of sp_bpe: cell 1 of 2" in log and "size 380 of sp_bpe: cell 2 of 2" in log
    assert not (together / "logs/train_tokenizer/en/sp_bpe").exists()
    assert (together / "logs/train_tokenizer/en/char/full.log").is_file()
    cost = (together / "tables/cost.csv").read_text(encoding="utf-8").splitlines()
    # size all, no requested size (vocab_size empty)
    assert sum(",all,,job," in row for row in cost) == 2  # sp_bpe and hf_bpe
    assert sum(",job," in row for row in cost) == 3  # and char's own job
    # the cells' own phases are measured one by one
    assert sum(",sp_bpe,380,380,train," in row for row in cost) == 1


@pytest.mark.slow
def test_turning_it_on_rescores_without_retraining(tmp_path: Path) -> None:
    results = _study(tmp_path, together=False)
    model = results / "tokenizers/en/sp_bpe/380/spm.model"
    trained = model.stat().st_mtime_ns
    _study(tmp_path, together=True)
    log = (results / "logs/train_tokenizer_sizes/en/sp_bpe.log").read_text(encoding="utf-8")
    assert log.count("reusing the tokenizer in") == 2
    assert model.stat().st_mtime_ns == trained
