"""The models planner: CharacterBERT jobs and the inputs of TSV sentence datasets."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import write_lines

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import Cell
from tokstudy.workflow.models.section import CHARACTERBERT_NAME
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study


def _plan(tmp_path: Path, **models: object) -> StudyPlan:
    """A one-language study (base ``tmp_path``) with TSV files train.tsv and test.tsv there."""
    for name in ("train.tsv", "test.tsv"):
        write_lines(tmp_path / name, ["text\tlabel", "a b\tyes"])
    config = {
        "languages": {"xx": {"path": str(write_lines(tmp_path / "xx.txt", ["a b"]))}},
        "tokenizers": {"sp_bpe": {"vocab_sizes": [50]}},
        "metrics": ["mu"],
        "results_dir": "res",
        "models": {
            "languages": ["xx"],
            "tokenizers": ["sp_bpe"],
            "vocab_sizes": [50],
            "tasks": ["mlm", "sentence"],
            **models,
        },
    }
    return StudyPlan(Study(config, tmp_path))


def test_characterbert_jobs_have_no_tokenizer_and_their_own_corpus(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        characterbert={"word_vocab_size": 100},
        sentence_tsv={"xx": {"train": "train.tsv", "test": "test.tsv"}},
    ).models
    mlm, finetune = plan.planner("mlm"), plan.kind_planner("finetune")
    assert plan.section.cells() == [
        Cell("xx", "sp_bpe", "50", 50),
        Cell("xx", CHARACTERBERT_NAME, "100", 100),
    ]
    charbert = SimpleNamespace(
        language="xx", tokenizer=CHARACTERBERT_NAME, size="100", task="sentence"
    )
    bert = SimpleNamespace(language="xx", tokenizer="sp_bpe", size="50", task="sentence")
    assert mlm.tokenizer_dir(charbert) == []
    assert mlm.tokenizer_dir(bert) == "res/tokenizers/xx/sp_bpe/50"
    assert mlm.corpus_dir(charbert) == "res/models/characterbert/xx/100"
    assert mlm.corpus_dir(bert) == "res/models/corpora/xx/sp_bpe/50"
    expected = {"tsv_train": str(tmp_path / "train.tsv"), "tsv_test": str(tmp_path / "test.tsv")}
    assert finetune.finetune_data(charbert) == finetune.finetune_data(bert) == expected
    assert mlm.characterbert()["word_vocab_size"] == 100
    assert [keys["tokenizer"] for keys in mlm.score_files().values()] == [
        "sp_bpe",
        CHARACTERBERT_NAME,
    ]


def test_sentence_task_needs_a_treebank_or_a_tsv_dataset(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=r"task sentence needs .* models\.sentence_tsv\.xx"):
        _plan(tmp_path)
    assert _plan(tmp_path, tasks=["mlm"]).models.planner("mlm").characterbert() == {}


def test_clm_runs_at_each_scale_on_its_languages_and_seeds(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        tasks=["clm", "noise"],
        seeds=[0, 1],
        clm={"preset": "tiny", "epochs": 2},
        clm_scales=[{"languages": ["xx"], "seeds": [0], "clm": {"preset": "small"}}],
    )
    models = plan.models
    clm = models.planner("clm")
    files = clm.score_files()
    assert sorted(files) == [
        "res/models/runs/xx/sp_bpe/50/seed0/clm/small/clm.tsv",
        "res/models/runs/xx/sp_bpe/50/seed0/clm/tiny/clm.tsv",
        "res/models/runs/xx/sp_bpe/50/seed1/clm/tiny/clm.tsv",
    ]
    assert files["res/models/runs/xx/sp_bpe/50/seed0/clm/small/clm.tsv"]["scale"] == "small"
    tiny = clm.clm_settings("tiny", "1")
    assert (tiny["preset"], tiny["epochs"], tiny["seed"]) == ("tiny", 2.0, 1)
    assert clm.clm_settings("small", "0")["epochs"] == 4.0  # the ClmConfig default
    assert clm.clm_scale_pattern() == "tiny|small"
    assert models.planner("mlm").score_files() == {}
    assert {"clm", "clm_scales"} <= set(models.summary_tables())
    priority = {
        (scale, size): clm.clm_priority(SimpleNamespace(scale=scale, size=size))
        for scale in ("tiny", "small")
        for size in ("50", "full")
    }  # longest first: the larger preset, then char (no size: several times the tokens)
    assert sorted(priority, key=priority.get, reverse=True) == [
        ("small", "full"),
        ("small", "50"),
        ("tiny", "full"),
        ("tiny", "50"),
    ]
    # the jobs a model waits for take its priority: xx's pretokenized corpus and tokenizer
    # feed a small model (rank 2 by hand: small is the second preset), a cell without
    # models nothing
    wildcards = SimpleNamespace(language="xx", tokenizer="sp_bpe", size="50")
    assert clm.pretokenize_priority(wildcards) == priority[("small", "50")] == 2
    assert clm.cell_model_priority(Cell("xx", "sp_bpe", "70", 70)) == 0


def test_a_named_scale_trains_one_preset_at_a_second_budget(tmp_path: Path) -> None:
    flops = {"preset": "tiny", "budget": "flops", "train_flops": 1.0e12}
    clm = _plan(
        tmp_path,
        tasks=["clm"],
        clm={"preset": "tiny"},
        clm_scales=[{"clm": flops, "name": "tiny_flops"}],  # the languages and seeds of models
        seeds=[0, 1],
    ).models.planner("clm")
    assert sorted(clm.score_files()) == [
        f"res/models/runs/xx/sp_bpe/50/seed{seed}/clm/{scale}/clm.tsv"
        for seed in (0, 1)
        for scale in ("tiny", "tiny_flops")
    ]
    assert clm.clm_scale_pattern() == "tiny|tiny_flops"
    assert clm.clm_settings("tiny_flops", "0")["budget"] == "flops"
    assert clm.clm_settings("tiny", "0")["budget"] == "bytes"
    # the same preset: the same priority, from the preset, not the name
    ranks = {clm.clm_priority(SimpleNamespace(scale=s, size="50")) for s in clm.scales}
    assert ranks == {0}


@pytest.mark.parametrize(
    ("scales", "message"),
    [
        (
            [{"languages": ["yy"], "clm": {"preset": "small"}}],
            r"models\.clm_scales\.languages must be one of xx, got 'yy'",
        ),
        (
            [{"languages": ["xx"], "clm": {"preset": "tiny"}}],
            r"scales \['tiny', 'tiny'\] repeat \(a second scale of one preset needs its own",
        ),
        (
            [{"languages": ["xx"], "clm": {"preset": "tiny"}, "name": "Tiny-FLOPs"}],
            r"models\.clm_scales\.name: 'Tiny-FLOPs' is not a lower-case name",
        ),
    ],
)
def test_bad_clm_scales_are_one_line_errors(tmp_path: Path, scales: list, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        _plan(tmp_path, tasks=["clm"], clm_scales=scales)
