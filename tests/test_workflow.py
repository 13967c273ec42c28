"""The Snakemake workflow end to end on a tiny study, its rerun semantics and bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, SHARED, write_lines
from workflow_support import planned_jobs, snakemake, tiny_config

from tokstudy.metrics.compute import METRICS
from tokstudy.report.cost import COLUMNS as COST_COLUMNS

pytestmark = [pytest.mark.slow, pytest.mark.shared]


LANGUAGES = ["bn", "en", "mr"]
TOKENIZERS = {
    "sp_bpe": 2,
    "hf_unigram": 2,
    "char": 1,
}  # name -> number of sizes (all deterministic)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory, english_lines: list[str]) -> Path:
    workdir = tmp_path_factory.mktemp("study")
    config = tiny_config(workdir, english_lines)
    result = snakemake(workdir, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir


def test_run_writes_tidy_table_wide_tables_and_plots(finished_run: Path) -> None:
    table = pd.read_csv(finished_run / "results/tables/metrics.csv")
    assert list(table.columns) == [
        "language",
        "tokenizer",
        "vocab_size",
        "split",
        "metric",
        "value",
        "kind",
    ]
    assert set(table["kind"]) == {"trained"}
    jobs = len(LANGUAGES) * sum(TOKENIZERS.values())
    assert len(table) == jobs * 2 * len(METRICS)
    assert sorted(table["language"].unique()) == LANGUAGES
    assert set(table["split"]) == {"train", "heldout"}
    sp = table[(table.tokenizer == "sp_bpe") & (table.metric == "vocab_size")]
    assert set(sp["value"]) == {250.0, 380.0}
    mu = table[(table.metric == "mu") & (table.split == "train")].set_index(
        ["language", "tokenizer", "vocab_size"]
    )
    # more vocabulary, shorter sequences; characters give the longest
    for language in LANGUAGES:
        assert (
            mu.loc[(language, "sp_bpe", 380), "value"] < mu.loc[(language, "sp_bpe", 250), "value"]
        )
    for split in ("train", "heldout"):
        markdown = (finished_run / f"results/tables/metrics_{split}.md").read_text()
        assert "## fertility" in markdown and "hf_unigram" in markdown
        assert (
            "\\begin{tabular}" in (finished_run / f"results/tables/metrics_{split}.tex").read_text()
        )
        for metric in ("f95", "mu", "nu", "fertility", "unk_rate"):
            for ext in ("png", "pdf"):
                assert (
                    finished_run / f"results/plots/metrics/{metric}_{split}.{ext}"
                ).stat().st_size > 1000
    for language in LANGUAGES:
        assert (finished_run / f"results/plots/frequencies/{language}.png").stat().st_size > 1000
    assert (finished_run / "results/tokenizers/en/sp_bpe/250/vocab.tsv").read_text().count(
        "\n"
    ) == 250
    for log in (finished_run / "results/logs").rglob("*.log"):
        assert log.stat().st_size > 0, f"empty log {log}"


def test_run_writes_cost_table_and_plot(finished_run: Path) -> None:
    cost = pd.read_csv(finished_run / "results/tables/cost.csv", dtype={"size": str})
    assert list(cost.columns) == COST_COLUMNS
    jobs = len(LANGUAGES) * sum(TOKENIZERS.values())
    # one job per cell: its training and metric phases, and the whole job
    assert cost["step"].value_counts().to_dict() == {"train": jobs, "metrics": jobs, "job": jobs}
    assert (cost["seconds"] > 0).all() and (cost["text_mb"] > 0).all()
    metrics = cost[cost["step"] == "metrics"]
    assert (metrics["encode_mb_s"] > 0).all()
    assert cost.loc[cost["step"] != "metrics", "encode_mb_s"].isna().all()
    seconds = cost.pivot(index=["language", "tokenizer", "size"], columns="step", values="seconds")
    assert (seconds["job"] >= seconds["train"] + seconds["metrics"]).all()
    phases = cost[cost["step"] != "job"].dropna(subset=["max_rss_mb", "cpu_seconds"])
    assert len(phases) == 2 * jobs and (phases["max_rss_mb"] > 0).all()
    assert (finished_run / "results/plots/cost.png").stat().st_size > 1000


def test_report_is_generated(finished_run: Path) -> None:
    result = snakemake(
        finished_run, "--report", "results/report.html", config=finished_run / "study.yaml"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (finished_run / "results/report.html").stat().st_size > 10_000


def test_second_run_gives_identical_metrics(
    finished_run: Path, tmp_path: Path, english_lines: list[str]
) -> None:
    config = tiny_config(tmp_path, english_lines)
    result = snakemake(tmp_path, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    first = (finished_run / "results/tables/metrics.csv").read_bytes()
    assert (tmp_path / "results/tables/metrics.csv").read_bytes() == first
    for model in ("en/sp_bpe/380/spm.model", "bn/hf_unigram/250/tokenizer.json"):
        assert (tmp_path / "results/tokenizers" / model).read_bytes() == (
            finished_run / "results/tokenizers" / model
        ).read_bytes()


def test_nothing_reruns_when_nothing_changed(finished_run: Path) -> None:
    result = snakemake(finished_run, "-n", config=finished_run / "study.yaml")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_changing_one_tokenizer_reruns_only_its_jobs(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "study.yaml").read_text())
    config["tokenizers"]["sp_bpe"] = {"params": {"split_digits": True}}
    changed = finished_run / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    jobs = planned_jobs(snakemake(finished_run, "-n", config=changed))
    per_job = {
        (rule, w)
        for rule, w in jobs
        if rule in {"prepare_corpus", "train_tokenizer", "compute_metrics"}
    }
    expected = {
        ("train_tokenizer", f"language={language}, tokenizer=sp_bpe, size={size}")
        for language in LANGUAGES
        for size in (250, 380)
    }
    assert per_job == expected


def test_changing_one_corpus_reruns_only_its_language(finished_run: Path) -> None:
    # a touch alone reruns nothing: Snakemake compares the checksums of small inputs
    source = finished_run / "data" / "en.txt"
    with open(source, "a", encoding="utf-8") as handle:
        handle.write("One more line of English text.\n")
    jobs = planned_jobs(snakemake(finished_run, "-n", config=finished_run / "study.yaml"))
    per_job = {
        (rule, w)
        for rule, w in jobs
        if rule in {"prepare_corpus", "train_tokenizer", "compute_metrics"}
    }
    assert ("prepare_corpus", "language=en") in per_job
    assert {w.split(",")[0] for _, w in per_job} == {"language=en"}
    assert len(per_job) == 1 + sum(TOKENIZERS.values())  # one job per cell


def test_a_corpus_back_with_a_new_time_and_the_same_bytes_reruns_nothing(tmp_path: Path) -> None:
    # 1.5 MB: above Snakemake's own 1 MB limit for comparing checksums, under the workflow
    # profile's 100 MB. Oracle that the profile decides it: without it (--workflow-profile
    # none) Snakemake reruns the corpus by time; changed bytes rerun it either way.
    corpus = tmp_path / "zz.txt"
    write_lines(
        corpus, [f"line {n} of a corpus copied again {n * 7919 % 104729}" for n in range(40000)]
    )
    assert 1_000_000 < corpus.stat().st_size < 100_000_000
    config = _single(tmp_path, {"path": str(corpus)})
    target = "results/corpora/zz/train.txt"
    first = snakemake(tmp_path, "--cores", "1", target, config=config)
    assert first.returncode == 0, first.stderr[-2000:]
    later = corpus.stat().st_mtime + 60
    os.utime(corpus, (later, later))  # copied again: new time, same bytes

    def reruns(*args: str) -> bool:
        dry = snakemake(tmp_path, "-n", target, *args, config=config)
        assert dry.returncode == 0, dry.stderr[-2000:]
        return "Nothing to be done" not in dry.stdout + dry.stderr

    assert not reruns()
    assert reruns("--workflow-profile", "none")
    with open(corpus, "a", encoding="utf-8") as handle:
        handle.write("one line more\n")
    assert reruns()


def test_slurm_profile_dry_run_and_lint(finished_run: Path) -> None:
    dry = snakemake(
        finished_run,
        "-n",
        "--profile",
        str(REPO / "profiles/slurm"),
        config=finished_run / "study.yaml",
    )
    assert dry.returncode == 0, dry.stderr[-2000:]
    lint = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    # the one lint left is by design: no rule names a conda env or container, since every
    # rule runs in the package's one environment (docs/architecture.md, "Environments and
    # layout"; tests/test_conda_envs.py)
    found = set(re.findall(r"^    \* (.+?):?$", lint.stdout + lint.stderr, re.M))
    assert found == {"Specify a conda environment or container for each rule."}, found


def _single(
    tmp_path: Path, language: dict, tokenizers: dict | None = None, **changes: object
) -> Path:
    config = {
        "languages": {"zz": language},
        "tokenizers": tokenizers or {"sp_bpe": {"vocab_sizes": [60]}},
        "metrics": ["mu"],
        "corpus_defaults": {"heldout": 2},
        **changes,
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    ("config_changes", "message"),
    [
        (
            {"tokenizers": {"bpe": {}}},
            r"config error: config key tokenizers.bpe: unknown tokenizer 'bpe'; valid choices: "
            r"bbpe, bpe_dropout, "
            r".*char, .*sp_bpe",
        ),
        ({"metrics": ["fertilty"]}, r"'fertilty' is not one of \['f95'"),
        ({"vocab_sizes": ["many"]}, r"'many' is not of type 'integer'"),
        ({"corpus_defaults": {"heldout": -3}}, r"-3 is less than or equal to the minimum of 0"),
        (
            {"languages": {"zz": {"path": "missing/zz.txt"}}},
            r"corpus of language 'zz': file not found: missing/zz\.txt",
        ),
        ({"colour": "blue"}, r"Additional properties are not allowed \('colour' was unexpected\)"),
    ],
)
def test_bad_config_fails_at_start_with_a_clear_line(
    tmp_path: Path, config_changes: dict, message: str
) -> None:
    corpus = write_lines(tmp_path / "zz.txt", ["a b c"] * 10)
    config = _single(tmp_path, {"path": str(corpus)}, **config_changes)
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode != 0
    assert re.search(message, result.stdout + result.stderr), (result.stdout + result.stderr)[
        -2000:
    ]


@pytest.mark.parametrize(
    ("content", "message", "partial"),
    [
        (b"good line\nbad \xfe line\n", "invalid UTF-8 at line 2", "results/corpora/zz/train.txt"),
        (b"\n  \n\r\n", "empty after cleaning", "results/corpora/zz/train.txt"),
        (
            "".join(f"w{i} x{i}\n" for i in range(40)).encode(),
            "vocabulary size 12 cannot be reached",
            "results/tokenizers/zz/sp_bpe/12",
        ),
    ],
)
def test_bad_data_fails_its_job_and_leaves_no_partial_output(
    tmp_path: Path, content: bytes, message: str, partial: str
) -> None:
    corpus = tmp_path / "zz.txt"
    corpus.write_bytes(content)
    config = _single(tmp_path, {"path": str(corpus)}, tokenizers={"sp_bpe": {"vocab_sizes": [12]}})
    result = snakemake(tmp_path, "--cores", "1", config=config)
    assert result.returncode != 0
    assert "error: " in result.stderr and message in result.stderr
    assert not (tmp_path / partial).exists()


def test_analyses_tables(tmp_path: Path) -> None:
    corpora = SHARED / "corpora" / "hft2022"
    config = {
        "seed": 3,
        "data_root": str(corpora),
        "corpus_defaults": {"heldout": 40, "max_lines": 400},
        "languages": {"en": {}, "mr": {}},
        "tokenizers": {"sp_bpe": {"vocab_sizes": [300]}, "char": {}},
        "metrics": ["mu"],
        "analyses": {
            "segmentation": {"vocab_size": 300, "words": {"en": ["treatment", "zzyzx"]}},
            "ud_root": str(SHARED / "ud"),
            "parity": {"reference": "en", "target": "mr"},
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    tables = tmp_path / "results/tables/analysis"
    segmentation = pd.read_csv(tables / "segmentation_en.csv")
    assert list(segmentation["word"]) == ["treatment", "zzyzx"]
    assert list(segmentation["in_corpus"]) == [True, False]
    assert segmentation.loc[1, "char (full)"] == "z z y z x"
    alignment = pd.read_csv(tables / "morphological_alignment.csv")
    assert set(alignment["language"]) == {"en", "mr"}
    assert alignment["aligned_share_types"].between(0, 1).all()
    assert sorted(set(alignment["encoding"])) == ["alone", "in_context"]
    assert alignment["chance_types"].between(0, 1).all()
    chars = alignment[alignment["tokenizer"] == "char"]  # every position cut: chance 1
    assert (chars["aligned_share_types"] == 1).all() and (chars["chance_types"] == 1).all()
    assert chars["corrected_types"].isna().all()
    parity = pd.read_csv(tables / "parity.csv")
    assert set(parity["tokenizer"]) == {"sp_bpe", "char"} and (parity["lines"] == 40).all()
    assert (parity["mean"] > 0).all()


def test_analyses_config_errors(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "zz.txt", ["a b c"] * 10)
    config = _single(
        tmp_path, {"path": str(corpus)}, analyses={"parity": {"reference": "zz", "target": "en"}}
    )
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode != 0
    assert (
        "analyses.parity.target: language 'en' is not in languages" in result.stdout + result.stderr
    )


def test_multilingual_tables(tmp_path: Path) -> None:
    config = {
        "seed": 7,
        "corpus_defaults": {"heldout": 0.1, "max_lines": 600},
        "languages": {
            "bn": {"chatterbot": "bengali"},
            "de": {"chatterbot": "german"},  # not mixed
            "en": {"chatterbot": "english"},
        },
        "tokenizers": {"sp_unigram": {"vocab_sizes": [300], "params": {"split_digits": True}}},
        "metrics": ["mu"],
        "analyses": {
            "multilingual": {
                "languages": ["bn", "en"],
                "tokenizers": ["sp_unigram", "hf_bpe"],
                "vocab_sizes": [300, 400],
                "temperature": 2,
                "total_lines": 700,
            }
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", "analysis_outputs", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    assert not (results / "tokenizers").exists()  # the monolingual jobs are not needed
    assert len((results / "multilingual/corpus/train.txt").read_text().splitlines()) == 700
    meta = json.loads((results / "multilingual/tokenizers/sp_unigram/300/meta.json").read_text())
    assert (meta["language"], meta["vocab_size"], meta["params"]) == (
        "bn+en",
        300,
        {"split_digits": True},
    )
    keys = ["tokenizer", "vocab_size", "language"]
    cells = {
        (t, s, lang) for t in ("hf_bpe", "sp_unigram") for s in (300, 400) for lang in ("bn", "en")
    }
    shares = pd.read_csv(results / "tables/analysis/multilingual_vocabulary_share.csv")
    assert set(shares[keys].itertuples(index=False, name=None)) == cells and len(shares) == 8
    assert (shares["share_exclusive"] > 0).all()  # Bengali and Latin script share few items
    assert (shares["share_exclusive"] <= shares["share_used"]).all()
    assert (shares["share_used"] <= 1).all()
    per_tokenizer = shares.groupby(["tokenizer", "vocab_size"])
    assert (per_tokenizer["share_exclusive"].sum() <= 1).all()
    assert (per_tokenizer["training_lines"].sum() == 700).all()
    fertility = pd.read_csv(results / "tables/analysis/multilingual_fertility.csv")
    assert set(fertility[keys].itertuples(index=False, name=None)) == cells
    assert len(fertility) == 8 and (fertility["fertility"] > 1).all()
    assert fertility["unk_rate"].between(0, 1).all()
    wide = fertility.pivot(index=["tokenizer", "language"], columns="vocab_size", values="tokens")
    assert (wide[400] <= wide[300]).all()  # a larger vocabulary cuts text into fewer tokens
    assert (results / "plots/analysis/multilingual_vocabulary_share.png").stat().st_size > 1000
    assert (results / "logs/multilingual_corpus.log").read_text().count(" sampled") == 2


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            {"tokenizers": ["sp_bpe"], "vocab_sizes": [60]},
            "config error: config key analyses.multilingual.languages: a multilingual tokenizer "
            "needs at least two languages, got zz\n",
        ),
        (
            {"tokenizers": ["sp_bpe"], "vocab_sizes": [60], "temprature": 2},
            "Additional properties are not allowed ('temprature' was unexpected)",
        ),
    ],
)
def test_multilingual_config_errors(tmp_path: Path, section: dict, message: str) -> None:
    corpus = write_lines(tmp_path / "zz.txt", ["a b c"] * 10)
    config = _single(tmp_path, {"path": str(corpus)}, analyses={"multilingual": section})
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr, (result.stdout + result.stderr)[-2000:]
