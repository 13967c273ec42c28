"""Every value is checked before the first job (issue 54): ``tokstudy check-config`` and the
Snakefile's start run one function (``plan_study``), which checks every tokenizer parameter
as its adapter declares it, the cross-checks against the study, and what the rules would
otherwise check only when Snakemake builds their jobs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from tokstudy.cli import main
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.registry import adapter_class, adapter_names

#: what an adapter needs beside the parameter under test to pass (a parity-aware one its
#: balance)
NEEDS: dict[str, dict[str, Any]] = {"parity_bpe": {"ratio": {"en": 1.0}}}


pytestmark = pytest.mark.usefixtures("schema_read_once")


def _config(tmp_path: Path, tokenizers: dict[str, Any], **changes: Any) -> Path:
    config = {
        "languages": {"en": {"chatterbot": "english"}},
        "vocab_sizes": [300],
        "tokenizers": tokenizers,
        "metrics": ["mu"],
        **changes,
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check-config", str(path)])
    captured = capsys.readouterr()
    return code, captured.err.splitlines()


def _number(param: Param, value: float) -> Any:
    types = param.types if isinstance(param.types, tuple) else (param.types,)
    return int(value) if int in types and float(value).is_integer() else float(value)


def bad_values(param: Param) -> list[tuple[str, Any]]:
    """``(key suffix, value)`` pairs a declaration refuses: a wrong type, a value outside
    the choices or the bounds, a value that is not finite, a bad item."""
    types = param.types if isinstance(param.types, tuple) else (param.types,)
    wrong = [v for v in ("text", 2.5, [], {}) if not isinstance(v, types)]
    found = [("", wrong[0])]
    if param.choices:
        found.append(("", "no-such-choice"))
    if param.minimum is not None:
        found.append(("", _number(param, param.minimum if param.low_open else param.minimum - 1)))
    if param.maximum is not None:
        found.append(("", _number(param, param.maximum if param.high_open else param.maximum + 1)))
    if float in types:
        found.append(("", math.nan))
    if param.items is not None:
        (_, item), *_ = bad_values(param.items)
        found.append((".en", {"en": item}) if dict in types else ("[0]", [item]))
    return found


CASES = [
    pytest.param(name, key, suffix, value, id=f"{name}.{key}{suffix}={value!r}")
    for name in adapter_names()
    for key, param in adapter_class(name).params_spec.items()
    for suffix, value in bad_values(param)
]


def test_every_adapter_passes_with_its_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokenizers = {name: {"params": NEEDS.get(name, {})} for name in adapter_names()}
    assert _check(_config(tmp_path, tokenizers), capsys) == (0, [])


@pytest.mark.parametrize(("name", "key", "suffix", "value"), CASES)
def test_a_bad_declared_value_is_one_line_at_check_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, key: str, suffix: str, value
) -> None:
    params = {**NEEDS.get(name, {}), key: value}
    code, lines = _check(_config(tmp_path, {name: {"params": params}}), capsys)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith(
        f"tokstudy: error: config key tokenizers.{name}.params.{key}{suffix}:"
    )


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("superbpe", {"transition": 1.5}, "transition: must be < 1.0, got 1.5"),
        ("superbpe", {"transition": 1}, "transition: must be < 1.0, got 1"),
        ("morfessor", {"count_modifier": "foo"}, "count_modifier: must be one of log, ones, none"),
        ("parity_bpe", {"ratio": {"en": 1}, "variant": "foo"}, "variant: must be one of base"),
        ("bpe_knockout", {"margin": -1}, "margin: must be ≥ 0.0, got -1"),
        ("bpe_knockout", {"threshold": 2}, "threshold: must be ≤ 1.0, got 2"),
        ("parity_bpe", {"ratio": {"en": -1}}, "ratio.en: must be > 0, got -1"),
        ("parity_bpe", {"ratio": {"en": 1, "xx": 5}}, "ratio: 'xx' is not a language it is"),
        ("hf_bpe", {"min_frequency": -1}, "min_frequency: BpeTrainer: can't convert negative"),
        ("hf_unigram", {"shrinking": 0.5}, "shrinking: unknown parameter: UnigramTrainer has"),
        ("sp_bpe", {"split_digits": "maybe"}, "split_digits: SentencePiece: INVALID_ARGUMENT"),
        ("sp_unigram", {"no_such_option": 1}, "no_such_option: SentencePiece: NOT_FOUND: unknown"),
    ],
)
def test_the_probes_of_issue_54_fail_at_check_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, params: dict, message: str
) -> None:
    code, lines = _check(_config(tmp_path, {name: {"params": params}}), capsys)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith(f"tokstudy: error: config key tokenizers.{name}.params.{message}")


def test_a_multilingual_parity_tokenizer_is_checked_against_the_mixed_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    languages = {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}}
    multilingual = {"tokenizers": ["parity_bpe"], "vocab_sizes": [300]}
    path = _config(
        tmp_path,
        {"parity_bpe": {"params": {"ratio": {"en": 1, "de": 1, "fr": 1}}}},
        languages=languages,
        analyses={"multilingual": multilingual},
    )
    code, lines = _check(path, capsys)
    assert code == 1 and len(lines) == 1, lines
    assert "tokenizers.parity_bpe.params.ratio: 'fr' is not a language" in lines[0]


def test_devices_against_gpu_resources_at_check_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check ``snakemake -n`` made when it built the rule's job, now at the start."""
    models = {
        "languages": ["en"],
        "tokenizers": ["char"],
        "vocab_sizes": [300],
        "tasks": ["clm"],
        "clm": {"devices": 4, "device": "cuda"},
    }
    path = _config(tmp_path, {"char": {}}, models=models, resources={"train_clm": {"gpu": 1}})
    code, lines = _check(path, capsys)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0] == (
        "tokstudy: error: config key resources.train_clm.gpu (1) differs from "
        "models.clm.devices (4): the job needs one GPU per process"
    )
