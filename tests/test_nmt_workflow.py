"""The NMT stage through Snakemake: a tiny end-to-end run, the joint option and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import write_lines
from workflow_support import planned_jobs, snakemake

from tokstudy.errors import TokstudyError
from tokstudy.nmt.cldr import cldr_pairs
from tokstudy.tokenizers.registry import load_tokenizer

pytestmark = pytest.mark.slow


DIRECTIONS = ["en-mr", "mr-en"]
TOKENIZERS = ["hft", "sp_bpe"]
TEST_LINES = 40


def nmt_study(workdir: Path, **nmt_changes: object) -> Path:
    """A study whose NMT stage translates CLDR names en↔mr with tiny, briefly trained models."""
    nmt = {
        "languages": ["en", "mr"],
        "directions": DIRECTIONS,
        "corpus": {"builtin": "cldr"},
        "tokenizers": TOKENIZERS,
        "vocab_sizes": [300],
        "seeds": [1],
        "split": {"dev_size": 30, "test_size": TEST_LINES},
        "train": {
            "max_steps": 12,
            "eval_every": 6,
            "warmup_steps": 4,
            "max_tokens": 1024,
            "max_length": 48,
        },
        "decode": {"beam_size": 2},
        "evaluation": {"bootstrap_samples": 50, "qualitative_sentences": 2},
    }
    nmt.update(nmt_changes)
    config = {
        "seed": 1,
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"sp_bpe": {"vocab_sizes": [250]}},
        "metrics": ["mu"],
        "resources": {"nmt_train": {"threads": 1}, "nmt_translate": {"threads": 1}},
        "nmt": nmt,
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_cldr_corpus_is_translated_names_in_a_fixed_order() -> None:
    pairs = cldr_pairs("en", "mr")
    assert len(pairs) > 1500 and pairs == cldr_pairs("en", "mr")
    assert {("Germany", "जर्मनी"), ("Monday", "सोमवार"), ("India", "भारत")} <= set(pairs)
    assert all(source != target and source and target for source, target in pairs)
    assert not any(("\t" in side or "\n" in side) for pair in pairs for side in pair)
    with pytest.raises(TokstudyError, match="CLDR \\(Babel\\) has no locale 'qqq'"):
        cldr_pairs("en", "qqq")


@pytest.fixture(scope="module")
def nmt_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("nmt_study")
    result = snakemake(workdir, "--cores", "2", "nmt_outputs", config=nmt_study(workdir))
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir / "results"


def test_split_is_clean_and_reported(nmt_run: Path) -> None:
    summary = json.loads((nmt_run / "nmt/split/split.json").read_text("utf-8"))
    pairs = set(cldr_pairs("en", "mr"))
    assert summary["cleaning"]["pairs_kept"] == len(pairs)
    assert summary["sizes"] == {"train": len(pairs) - 30 - TEST_LINES, "dev": 30, "test": 40}
    assert {"source", "target", "pair"} == set(summary["test_in_train"])
    assert summary["test_in_train"]["pair"] == 0  # pairs are deduplicated
    test = list(
        zip(
            (nmt_run / "nmt/split/test.en").read_text("utf-8").splitlines(),
            (nmt_run / "nmt/split/test.mr").read_text("utf-8").splitlines(),
            strict=True,
        )
    )
    assert len(test) == TEST_LINES and set(test) <= pairs


def test_every_run_is_scored_on_detokenized_text(nmt_run: Path) -> None:
    for direction in DIRECTIONS:
        target = direction.split("-")[1]
        for tokenizer in TOKENIZERS:
            score = json.loads(
                (nmt_run / f"nmt/scores/{direction}/{tokenizer}/300/seed1.json").read_text("utf-8")
            )
            assert score["sentences"] == TEST_LINES
            assert 0 <= score["bleu"] <= 100 and 0 <= score["chrf"] <= 100
            assert score["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
            assert score["references"].endswith(f"test.{target}")
            hypotheses = nmt_run.parent / score["hypotheses"]  # relative to the workdir
            translations = hypotheses.read_text("utf-8").splitlines()
            assert len(translations) == TEST_LINES
    hft = json.loads((nmt_run / "nmt/scores/en-mr/hft/300/seed1.json").read_text("utf-8"))
    tokenizer = load_tokenizer(nmt_run / "nmt/tokenizers/mr/hft/300")
    references = (nmt_run / "nmt/split/test.mr").read_text("utf-8").splitlines()
    lost = [ref for ref in references if tokenizer.decode(tokenizer.encode(ref)) != ref]
    assert hft["reference_roundtrip_exact"] == pytest.approx(1 - len(lost) / len(references))
    # HFT is lossless except for characters its training side never saw ([UNK])
    assert all(tokenizer.unk_id in tokenizer.encode(ref) for ref in lost)
    train_log = pd.read_csv(nmt_run / "nmt/runs/en-mr/hft/300/seed1/train_log.csv")
    assert list(train_log["step"]) == [6, 12] and (train_log["tokens_per_s"] > 0).all()


def test_table1_significance_and_examples(nmt_run: Path) -> None:
    tables = nmt_run / "tables/nmt"
    table = pd.read_csv(tables / "table1_bleu.csv")
    assert list(table["direction"]) == ["en-mr", "en-mr", "mr-en", "mr-en"]
    assert list(table["system"]) == ["sp_bpe (300)", "hft (300)"] * 2
    assert table.loc[table.system == "sp_bpe (300)", "increment"].isna().all()
    hft_rows = table[table.system == "hft (300)"].reset_index(drop=True)
    baseline = table[table.system == "sp_bpe (300)"].reset_index(drop=True)
    assert hft_rows["increment"].to_numpy() == pytest.approx(
        (hft_rows["average"] - baseline["average"]).to_numpy(), abs=0.011
    )
    assert "\\begin{tabular}" in (tables / "table1_chrf.tex").read_text("utf-8")
    significance = pd.read_csv(tables / "significance.csv")
    assert len(significance) == 2 * 2  # two directions × BLEU and chrF, hft vs sp_bpe
    assert significance["p_value"].between(0, 1).all()
    examples = (tables / "qualitative.md").read_text("utf-8")
    assert examples.count("hft vs sp_bpe") == 2
    assert "**source:**" in examples or "equal sentence BLEU" in examples


def test_joint_vocabulary_trains_one_tokenizer_for_both_sides(tmp_path: Path) -> None:
    config = nmt_study(tmp_path, joint=True, directions=["en-mr"], tokenizers=["sp_bpe"])
    result = snakemake(tmp_path, "-n", "nmt_outputs", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = planned_jobs(result)
    tokenizer_jobs = {wildcards for rule, wildcards in jobs if rule == "nmt_train_tokenizer"}
    assert tokenizer_jobs == {"side=joint, tokenizer=sp_bpe, size=300"}
    assert ("nmt_joint_text", "") in jobs


def _fails_at_start(workdir: Path, message: str, **nmt_changes: object) -> None:
    result = snakemake(workdir, "-n", config=nmt_study(workdir, **nmt_changes))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert re.search(message, output), output[-2000:]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tokenizers": ["sp_bpe", "nope"]}, r"nmt\.tokenizers: unknown tokenizer 'nope'"),
        ({"corpus": {"builtin": "cldr", "tsv": "x.tsv"}}, "give exactly one of files, tsv"),
        ({"corpus": {"files": ["missing.en", "missing.mr"]}}, "nmt.corpus: file not found"),
        ({"directions": ["en-fr"]}, r"nmt\.directions: 'en-fr' is not 'src-tgt'"),
        ({"train": {"preset": "huge"}}, "nmt.train.preset must be one of tiny, base"),
        ({"train": {"beam": 3}}, r"nmt\.train: unknown key\(s\) beam"),
    ],
)
def test_bad_nmt_config_fails_at_start(tmp_path: Path, changes: dict, message: str) -> None:
    _fails_at_start(tmp_path, message, **changes)


def test_misaligned_files_fail_the_split_with_both_counts(tmp_path: Path) -> None:
    english = write_lines(tmp_path / "corpus.en", ["one", "two", "three"])
    marathi = write_lines(tmp_path / "corpus.mr", ["एक", "दोन"])
    config = nmt_study(tmp_path, corpus={"files": [str(english), str(marathi)]})
    result = snakemake(tmp_path, "--cores", "1", "nmt_split", config=config)
    assert result.returncode != 0
    assert f"error: parallel files differ in line count: {english} has 3 lines" in result.stderr
    assert f"{marathi} has 2" in result.stderr
    assert not (tmp_path / "results/nmt/split").exists() or not any(
        (tmp_path / "results/nmt/split").iterdir()
    )
