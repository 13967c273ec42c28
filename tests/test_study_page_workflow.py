"""The study page in the workflow: a small study end to end (the page, its rerun only when
an input changes, its place in the Snakemake report), and the default study's run, which
ends with its page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO
from workflow_support import planned_jobs, snakemake

from tokstudy.cli import main

pytestmark = pytest.mark.slow

DEFAULT = REPO / "config" / "config.yaml"


def page_data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    start = text.index('id="study-data">') + len('id="study-data">')
    return json.loads(text[start : text.index("</script>", start)])


def small_config(workdir: Path, **changes: object) -> Path:
    """The default study cut down to English and Persian, two tokenizers, one size, no
    multilingual tokenizers."""
    config = yaml.safe_load(DEFAULT.read_text(encoding="utf-8"))
    config["languages"] = {"en": {"chatterbot": "english"}, "fa": {"chatterbot": "persian"}}
    config["vocab_sizes"] = [250]
    config["tokenizers"] = {"hf_bpe": {}, "char": {"params": {"min_count": 1}}}
    config["metrics"] = ["fertility", "bytes_per_token", "mu"]
    config["plots"] = {"frequency_vocab_size": 250, "skip_top_ranks": 10}
    config["analyses"] = {"segmentation": {"vocab_size": 250, "words": {"en": ["computers"]}}}
    config.update(changes)
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def test_a_small_study_ends_with_its_page_rebuilt_only_on_change(tmp_path: Path) -> None:
    config = small_config(tmp_path)
    result = snakemake(tmp_path, "--cores", "2", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    data = page_data(results / "index.html")
    assert data["languages"] == ["en", "fa"] and len(data["cells"]) == 4
    assert data["samples"]["en"]["lines"][-1]["text"] == "computers"
    assert all(line["dir"] == "rtl" for line in data["samples"]["fa"]["lines"][:5])
    assert all((results / plot).is_file() for plot in data["plots"]) and data["plots"]
    for language in ("en", "fa"):
        table = pd.read_csv(results / "tables" / f"recommendation_{language}.csv")
        assert {"fertility", "bytes_per_token", "train_seconds", "pareto", "why"} <= set(table)
    log = (results / "logs" / "study_page.log").read_text(encoding="utf-8")
    assert re.search(r"study page .*'bytes': \d+", log), log[-2000:]
    again = snakemake(tmp_path, "-n", config=config)
    assert "Nothing to be done" in again.stdout + again.stderr
    words = small_config(
        tmp_path / "results",
        analyses={"segmentation": {"vocab_size": 250, "words": {"en": ["happiness"]}}},
    )
    rules = {rule for rule, _ in planned_jobs(snakemake(tmp_path, "-n", config=words))}
    assert rules == {"study_page", "segmentation_table", "all"}
    report = snakemake(tmp_path, "--report", "results/report.html", config=config)
    assert report.returncode == 0, report.stderr[-2000:]
    assert "Study page" in (results / "report.html").read_text(encoding="utf-8")


def test_the_default_run_ends_with_the_study_page(tmp_path: Path, capsys) -> None:
    result = snakemake(tmp_path, "--cores", "2", config=DEFAULT)
    assert result.returncode == 0, result.stderr[-3000:]
    page = tmp_path / "results" / "index.html"
    data = page_data(page)
    assert data["languages"] == ["en", "de", "fa", "bn"]  # the config's order
    assert len(data["cells"]) == 4 * (5 * 2 + 1)  # five sized tokenizers at two sizes, char
    assert all(cell["lines"] is not None for cell in data["cells"])
    assert any(line["dir"] == "rtl" for line in data["samples"]["fa"]["lines"])
    for language in data["languages"]:  # an answer for each, with its intervals
        summary = data["summary"][language]
        assert summary["cell"] is not None and summary["lines"] > 10
        assert all(m["low"] <= m["value"] <= m["high"] for m in summary["metrics"])
    german = pd.read_csv(tmp_path / "results" / "tables" / "recommendation_de.csv")
    assert {"fertility", "fertility_low", "train_seconds", "recommended"} <= set(german.columns)
    assert main(["status", str(tmp_path / "results"), "--directory", str(tmp_path)]) == 0
    status = capsys.readouterr().out
    assert "no run in progress; the last one:" in status and "(100%) done" in status
    # 44 cells and the 2 multilingual tokenizers (tokenizers.smk trains both)
    assert re.search(r"^tokenizers +46 +0 +0 +0$", status, re.M), status
    again = snakemake(tmp_path, "-n", config=DEFAULT)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_models_demo_plans_the_model_and_nmt_stages(tmp_path: Path) -> None:
    demo = REPO / "config" / "models_demo.yaml"
    rules = {rule for rule, _ in planned_jobs(snakemake(tmp_path, "-n", config=demo))}
    assert {"pretrain_mlm", "finetune_model", "nmt_train", "nmt_translate", "study_page"} <= rules
