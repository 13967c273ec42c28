"""Named tokenizer variants (issue 53): ``tokenizers: {name: {algorithm: …}}`` trains
``name`` with a registered adapter under its own params and training share, in its
algorithm's family; bad variants are one line at ``tokstudy check-config``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tokstudy.cli import main
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.directory import read_meta
from tokstudy.tokenizers.registry import load_tokenizer
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

pytestmark = pytest.mark.usefixtures("schema_read_once")
VARIANTS = {
    "hf_bpe": {},
    "bpe_half": {"algorithm": "hf_bpe", "train_fraction": 0.5},
    "unigram_cov": {"algorithm": "sp_unigram", "params": {"character_coverage": 0.995}},
}


def _config(tokenizers: dict[str, Any]) -> dict[str, Any]:
    return {
        "languages": {"en": {"chatterbot": "english"}},
        "vocab_sizes": [300],
        "tokenizers": tokenizers,
        "metrics": ["mu"],
    }


def test_a_variant_trains_with_its_algorithm_in_its_family() -> None:
    planners = StudyPlan(Study(_config(VARIANTS)))
    tokenizers = planners.tokenizers
    assert tokenizers.algorithm("bpe_half") == "hf_bpe"
    assert tokenizers.algorithm("hf_bpe") == "hf_bpe"  # a registered name keeps its meaning
    assert tokenizers.adapter("unigram_cov").name == "sp_unigram"
    assert tokenizers.families() == {"hf_bpe": "bpe", "bpe_half": "bpe", "unigram_cov": "unigram"}
    (cell,) = [c for c in tokenizers.cells() if c.tokenizer == "bpe_half"]
    assert cell.size == "300"  # a variant of a sized algorithm has its sizes
    spec = tokenizers.train_spec(cell)
    assert spec["algorithm"] == "hf_bpe" and spec["train_fraction"] == 0.5
    plain = tokenizers.train_spec(next(c for c in tokenizers.cells() if c.tokenizer == "hf_bpe"))
    assert "algorithm" not in plain  # its training spec (and rerun trigger) as before


def test_a_variant_directory_records_and_loads_its_algorithm(
    tmp_path: Path, english_corpus: Path
) -> None:
    corpus = english_corpus
    half = TrainSpec(vocab_size=300, train_fraction=0.5, algorithm="hf_bpe")
    train_to_directory("bpe_half", corpus, half, tmp_path / "half")
    train_to_directory("hf_bpe", corpus, TrainSpec(vocab_size=300), tmp_path / "whole")
    meta = read_meta(tmp_path / "half")
    assert (meta["tokenizer"], meta["algorithm"], meta["train_fraction"]) == (
        "bpe_half",
        "hf_bpe",
        0.5,
    )
    assert "algorithm" not in read_meta(tmp_path / "whole")
    loaded = load_tokenizer(tmp_path / "half")
    assert type(loaded).__name__ == "HFBPE"
    # half the lines learn other merges than all of them: the variant is another tokenizer
    assert loaded.vocab != load_tokenizer(tmp_path / "whole").vocab


@pytest.mark.parametrize(
    ("tokenizers", "message"),
    [
        (
            {"bpe_x": {"algorithm": "gpt_bpe"}},
            "config key tokenizers.bpe_x.algorithm: unknown tokenizer 'gpt_bpe'; valid choices:",
        ),
        (
            {"sp_bpe": {"algorithm": "hf_bpe"}},
            "config key tokenizers.sp_bpe.algorithm: 'sp_bpe' is itself an algorithm; give the "
            "variant of 'hf_bpe' another name",
        ),
        (
            {"my_bpe": {}},
            "config key tokenizers.my_bpe: unknown tokenizer 'my_bpe'; valid choices: bbpe, ",
        ),
        (
            {"chars": {"algorithm": "char"}},
            "config key tokenizers.chars.algorithm: 'char' sets its size from the data; a named "
            "variant must be of a sized algorithm",
        ),
        (
            {"hf_bpe": {}, "bpe_copy": {"algorithm": "hf_bpe"}},
            "config keys tokenizers.bpe_copy and tokenizers.hf_bpe: the same algorithm, params, "
            "train_fraction, max_train_lines, sizes and languages: one tokenizer trained twice "
            "under two names",
        ),
        (
            {
                "bpe_a": {"algorithm": "hf_bpe", "train_fraction": 0.5},
                "bpe_b": {"algorithm": "hf_bpe", "train_fraction": 0.5},
            },
            "config keys tokenizers.bpe_a and tokenizers.bpe_b: the same algorithm",
        ),
        (
            {"super_t": {"algorithm": "superbpe", "params": {"transition": 1.5}}},
            "config key tokenizers.super_t.params.transition:",
        ),
    ],
)
def test_a_bad_variant_is_one_line_at_check_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tokenizers: dict, message: str
) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(_config(tokenizers)), encoding="utf-8")
    assert main(["check-config", str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_the_same_algorithm_with_other_settings_is_two_tokenizers(tmp_path: Path, capsys) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(_config(VARIANTS)), encoding="utf-8")
    assert main(["check-config", str(path)]) == 0, capsys.readouterr().err
