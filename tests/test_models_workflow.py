"""The model stage in the workflow: a tiny end-to-end run and a bad models section."""

from __future__ import annotations

import json
from pathlib import Path

import conllu
import pandas as pd
import pytest
import yaml
from workflow_support import snakemake

from tokstudy.models.data import pretokenize
from tokstudy.models.family import training_tokenizer
from tokstudy.models.run_flags import RUN_FACTS
from tokstudy.models.silver import STTS_TO_UPOS

pytestmark = pytest.mark.slow


TOKENIZERS = ["hf_wordpiece", "sp_unigram"]


#: the training settings of every tiny model study in the tests: a few steps, a few lines
TINY_TRAINING = {
    "pretrain": {
        "steps": 6,
        "batch_size": 8,
        "max_length": 32,
        "warmup_steps": 2,
        "log_every": 2,
        "checkpoint_every": 3,
    },
    "finetune": {"epochs": 1, "batch_size": 16, "max_length": 32},
    "evaluation": {"noise_levels": [20], "max_lines": 20, "bootstrap_resamples": 50},
}


def models_config(workdir: Path, **models: object) -> Path:
    """A German-only study with a tiny models section (1 seed, a few steps)."""
    config = {
        "seed": 3,
        "languages": {"de": {"chatterbot": "german"}},
        "vocab_sizes": [300],
        "tokenizers": {name: {} for name in TOKENIZERS},
        "metrics": ["mu"],
        "models": {
            "languages": ["de"],
            "tokenizers": TOKENIZERS,
            "vocab_sizes": [300],
            "seeds": [0],
            "tasks": ["mlm", "noise", "pos"],
            **TINY_TRAINING,
            **models,
        },
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("models")
    # the corpora pretokenized in two shards each (rules pretokenize_shard, merge_pretokenized)
    config = models_config(workdir, pretokenize_shards=2)
    result = snakemake(workdir, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir / "results"


def test_run_writes_results_and_statistics_tables(model_run: Path) -> None:
    results = pd.read_csv(model_run / "tables/models/results.tsv", sep="\t")
    assert set(results["task"]) == {"mlm", "pos"}
    assert sorted(results["tokenizer"].unique()) == TOKENIZERS
    assert set(results["level"]) == {0, 20}
    pos = results[results["task"] == "pos"]
    assert set(pos["metric"]) == {"accuracy", "macro_f1", "majority_accuracy", "collapsed"}
    assert pos["value"].between(0, 1).all()
    ppl = results[(results["task"] == "mlm") & (results["metric"] == "pseudo_perplexity")]
    assert len(ppl) == len(TOKENIZERS) * 2 and (ppl["value"] > 1).all()

    wilcoxon = pd.read_csv(model_run / "tables/models/wilcoxon.tsv", sep="\t")
    assert set(zip(wilcoxon["a"], wilcoxon["b"], strict=True)) == {tuple(TOKENIZERS)}
    assert (wilcoxon["n"] == 1).all()
    bootstrap = pd.read_csv(model_run / "tables/models/bootstrap.tsv", sep="\t")
    assert (bootstrap["ci_low"] <= bootstrap["value"]).all()
    assert (bootstrap["value"] <= bootstrap["ci_high"]).all()
    assert len(bootstrap) == len(TOKENIZERS) * 2 * 2  # tokenizers × levels × metrics
    summary = pd.read_csv(model_run / "tables/models/seed_summary.tsv", sep="\t")
    scores = results[~results["metric"].isin(RUN_FACTS)]
    assert (summary["n"] == 1).all() and len(summary) == len(scores)
    # every flagged run (a model of a few steps may be) is listed and marked in the summary
    flagged = pd.read_csv(model_run / "tables/models/flagged_runs.tsv", sep="\t")
    raised = results[
        (results["level"] == 0)
        & results["metric"].isin(["collapsed", "undertrained"])
        & (results["value"] == 1)
    ]
    assert len(flagged) == len(raised[["task", "tokenizer", "seed"]].drop_duplicates())
    marked = summary[summary["flagged_seeds"] > 0]
    assert set(marked["tokenizer"]) == set(flagged["tokenizer"])
    assert "## Runs that did not learn" in (model_run / "tables/models/flagged_runs.md").read_text()
    for name in ("seed_summary", "wilcoxon", "bootstrap"):
        assert "| metric" in (model_run / f"tables/models/{name}.md").read_text()
    assert (model_run / "plots/models/noise.png").stat().st_size > 1000


def test_silver_treebank_is_valid_conllu_with_mapped_upos(model_run: Path) -> None:
    folder = model_run / "models/treebanks/de/silver"
    sizes = {}
    for split in ("train", "dev", "test"):
        text = (folder / f"de_silver-ud-{split}.conllu").read_text(encoding="utf-8")
        sentences = conllu.parse(text)
        sizes[split] = len(sentences)
        for token in (t for s in sentences for t in s):
            assert token["upos"] == STTS_TO_UPOS.get(token["xpos"], "X")
    assert sizes["train"] > sizes["dev"] > 0 and sizes["test"] > 0


def test_corpora_pretokenized_in_shards_are_those_one_job_writes(
    model_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(model_run.parent)  # the record names the text as the job does
    for tokenizer in TOKENIZERS:
        merged = model_run / f"models/corpora/de/{tokenizer}/300"
        one_job = tmp_path / tokenizer
        folder = model_run / f"tokenizers/de/{tokenizer}/300"
        text = Path("results/corpora/de/train.txt")
        record = {"sampled_segmentation": None}
        pretokenize(training_tokenizer(folder)[0], text, one_job, record=record)
        record = json.loads((merged / "corpus.json").read_text(encoding="utf-8"))
        assert record == json.loads((one_job / "corpus.json").read_text(encoding="utf-8"))
        for name in ("ids.bin", "line_offsets.npy"):
            assert (merged / name).read_bytes() == (one_job / name).read_bytes()
        assert not merged.with_name("300.shards").exists()  # temporary: removed once merged
        for shard in (0, 1):
            log = model_run / f"logs/pretokenize_shard/de/{tokenizer}/300/shard{shard}.log"
            assert "pretokenize_text: finished" in log.read_text(encoding="utf-8")


def test_pretraining_used_the_configured_steps(model_run: Path) -> None:
    for tokenizer in TOKENIZERS:
        log = pd.read_csv(
            model_run / f"models/runs/de/{tokenizer}/300/seed0/pretrain/train_log.csv"
        )
        assert log["step"].max() == 6


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ({"tokenizers": ["hf_bpe"]}, "models.tokenizers: 'hf_bpe' is not trained by this study"),
        ({"vocab_sizes": [500]}, "models.vocab_sizes: 500 is not trained"),
        ({"languages": ["en"]}, "models.languages: 'en' is not trained"),
        ({"pretrain": {"stepz": 3}}, "models.pretrain: unknown key(s) stepz"),
    ],
)
def test_bad_models_section_fails_at_start(tmp_path: Path, models: dict, message: str) -> None:
    result = snakemake(tmp_path, "-n", config=models_config(tmp_path, **models))
    assert result.returncode != 0
    assert message in result.stdout + result.stderr, (result.stdout + result.stderr)[-2000:]
