"""``tokstudy check-config`` on a machine: the disk and RAM a study needs, estimated from
its sources and settings, against what the machine has."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from conftest import write_lines

from tokstudy.cli import main
from tokstudy.workflow.footprint import (
    BYTES_PER_LINE,
    BYTES_PER_TOKEN,
    GZIP_EXPANSION,
    fit_report,
    footprint,
)
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study


def _plan(tmp_path: Path, **changes: Any) -> StudyPlan:
    plain = write_lines(tmp_path / "xx.txt", ["a b c d"] * 250)  # 2,000 bytes
    packed = tmp_path / "yy.txt.gz"
    packed.write_bytes(gzip.compress(b"e f\n" * 10))
    config = {
        "results_dir": str(tmp_path / "res"),
        "corpus_defaults": {"heldout": 0.1},
        "languages": {
            "xx": {"path": str(plain)},
            "yy": {"path": str(packed)},
            "zz": {"dataset": {"hub": "org/web", "split": "train"}, "max_bytes": 5_000_000},
        },
        "vocab_sizes": [300],
        "tokenizers": {"sp_bpe": None},
        "metrics": ["mu"],
        "models": {
            "languages": ["xx", "zz"],
            "tokenizers": ["sp_bpe"],
            "vocab_sizes": [300],
            "tasks": ["clm"],
        },
    }
    return StudyPlan(Study(config | changes))


def test_the_disk_of_a_study_counted_by_hand(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    needs = footprint(plan)
    packed = (tmp_path / "yy.txt.gz").stat().st_size
    assert needs.disk["prepared corpora"] == pytest.approx(2000 + GZIP_EXPANSION * packed + 5e6)
    # the model cells of xx and zz: 90 % of their text, 2-byte ids, 8 bytes of offsets a line
    train = 0.9 * (2000 + 5e6)
    per_byte = 2 / BYTES_PER_TOKEN + 8 / BYTES_PER_LINE
    assert needs.disk["pretokenized corpora"] == pytest.approx(train * per_byte)
    assert needs.unknown == ()
    assert (needs.job_rule, needs.job_mem_mb) == ("train_clm", 8000)


def test_shards_double_the_pretokenized_disk_and_a_hub_dataset_without_a_cap_is_unknown(
    tmp_path: Path,
) -> None:
    one = footprint(_plan(tmp_path)).disk["pretokenized corpora"]
    models = _plan(tmp_path).study.config["models"] | {"pretokenize_shards": 4}
    assert footprint(_plan(tmp_path, models=models)).disk["pretokenized corpora"] == 2 * one
    languages = _plan(tmp_path).study.config["languages"]
    uncapped = languages | {"zz": {"dataset": {"hub": "org/web", "split": "train"}}}
    report = fit_report(_plan(tmp_path, languages=uncapped), ram=10**10, free=10**10)
    assert report[1] == "disk: not counted: the text of zz (a Hub dataset without max_bytes)"


def test_the_report_says_what_fits_and_what_does_not(tmp_path: Path) -> None:
    resources = {"train_clm": {"mem_mb": 50000}}
    plan = _plan(tmp_path, resources=resources)
    small = fit_report(plan, ram=16 * 10**9, free=10**6)
    disk = footprint(plan).disk  # in MB below a tenth of a GB
    prepared, pretokenized = disk["prepared corpora"] / 1e6, disk["pretokenized corpora"] / 1e6
    assert small[0] == (
        f"disk: about {prepared + pretokenized:.0f} MB under {tmp_path / 'res'} (prepared "
        f"corpora {prepared:.0f} MB, pretokenized corpora {pretokenized:.0f} MB); 1 MB free "
        "there: does NOT fit"
    )
    assert small[-1] == (
        "RAM: the largest job asks 50,000 MB (train_clm, its mem_mb); this machine has "
        "16,000 MB: does NOT fit"
    )
    large = fit_report(plan, ram=64 * 10**9, free=10**12)
    assert large[0].endswith("1000.0 GB free there: fits") and large[-1].endswith(": fits")


def test_check_config_prints_the_fit(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "study.yaml"
    text = write_lines(tmp_path / "xx.txt", ["a b"] * 10)
    config.write_text(
        f"results_dir: {tmp_path / 'res'}\nlanguages: {{xx: {{path: {text}}}}}\n"
        "tokenizers: {char: null}\nmetrics: [mu]\n",
        encoding="utf-8",
    )
    assert main(["check-config", str(config)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{config}: ok"
    assert out[1].startswith("disk: about 0 MB under") and "prepared corpora 0 MB" in out[1]
    assert out[2].startswith("RAM: the largest job asks 4,000 MB (")
