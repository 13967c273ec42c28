"""Config resolution, and the schema, registry and docs staying in step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SHARED, write_lines

from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import METRICS
from tokstudy.tokenizers.cells import Cell, make_cell
from tokstudy.tokenizers.registry import adapter_names
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def _plan(tmp_path: Path, **changes: object) -> StudyPlan:
    corpus = write_lines(tmp_path / "xx.txt", ["a b"])
    config = {
        "languages": {"xx": {"path": str(corpus)}, "en": {"chatterbot": "english"}},
        "vocab_sizes": [300, 100],
        "tokenizers": {"sp_bpe": {"vocab_sizes": [50]}, "hf_bpe": None, "char": {}},
        "metrics": ["mu"],
        **changes,
    }
    return StudyPlan(Study(config))


def test_schema_lists_exactly_the_registered_metrics_and_no_tokenizer_names() -> None:
    assert "enum" not in SCHEMA["$defs"]["tokenizer_name"]  # the registry is the one list
    assert tuple(SCHEMA["properties"]["metrics"]["items"]["enum"]) == tuple(METRICS)


def test_every_config_key_is_documented() -> None:
    readme = (REPO / "config/README.md").read_text()
    keys = set(SCHEMA["properties"]) | set(SCHEMA["properties"]["corpus_defaults"]["properties"])
    keys |= set(SCHEMA["properties"]["plots"]["properties"])
    keys |= set(SCHEMA["properties"]["languages"]["additionalProperties"]["properties"])
    keys |= {f"models.{key}" for key in SCHEMA["properties"]["models"]["properties"]}
    quoted = set(re.findall(r"`([^`]*)`", readme))
    missing = sorted(key for key in keys if not any(re.search(rf"\b{key}\b", q) for q in quoted))
    assert not missing
    for name in adapter_names():
        assert f"`{name}`" in readme


#: configs that are overlays, given after the config they change (``--configfile a b``)
OVERLAYS = {"predictive_variants_gpu.yaml": "predictive_variants.yaml"}


def test_shipped_configs_are_valid_and_resolve() -> None:
    import jsonschema
    from snakemake.utils import update_config

    for path in sorted((REPO / "config").glob("*.yaml")):
        config = yaml.safe_load(path.read_text())
        if path.name in OVERLAYS:
            base = yaml.safe_load((REPO / "config" / OVERLAYS[path.name]).read_text())
            update_config(base, config)
            config = base
        jsonschema.validate(config, SCHEMA)
    default = StudyPlan(Study(yaml.safe_load((REPO / "config/config.yaml").read_text()), REPO))
    sources = [default.corpora.source_files(language) for language in default.study.languages]
    assert len({Path(p).parent.name for files in sources for p in files}) >= 3


def test_jobs_sizes_and_specs(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        languages={
            "xx": {
                "path": str(write_lines(tmp_path / "x", ["a"])),
                "tokenizer_params": {"sp_bpe": {"character_coverage": 0.98}},
            }
        },
    )
    assert plan.tokenizers.sizes("hf_bpe") == ["100", "300"]
    assert plan.tokenizers.sizes("sp_bpe") == ["50"]
    assert plan.tokenizers.sizes("char") == ["full"]
    assert [j.tokenizer for j in plan.tokenizers.cells()] == [
        "char",
        "hf_bpe",
        "hf_bpe",
        "sp_bpe",
    ]
    spec = plan.tokenizers.train_spec(plan.tokenizers.cell("xx", "sp_bpe", "50"))
    assert spec["vocab_size"] == 50 and spec["params"] == {"character_coverage": 0.98}
    assert (
        plan.tokenizers.train_spec(plan.tokenizers.cell("xx", "char", "full"))["vocab_size"] is None
    )
    # the size is the cell's, decided with its label: never read back from the label
    assert plan.tokenizers.train_spec(Cell("xx", "sp_bpe", "50", 64))["vocab_size"] == 64
    with pytest.raises(TokstudyError, match=r"^no cell xx/sp_bpe/60 in the study"):
        plan.tokenizers.cell("xx", "sp_bpe", "60")


@pytest.mark.parametrize(
    ("tokenizer", "requested", "kind", "cell"),
    [
        ("sp_bpe", 4000, "trained", Cell("en", "sp_bpe", "4000", 4000)),
        ("sp_bpe", 4000.0, "trained", Cell("en", "sp_bpe", "4000", 4000)),
        ("char", 4000, "trained", Cell("en", "char", "full", None)),  # the data sets it
        ("char", None, "trained", Cell("en", "char", "full", None)),
        ("gpt_4o", None, "pretrained", Cell("en", "gpt_4o", "pretrained", None)),
        ("characterbert", 100, "trained", Cell("en", "characterbert", "100", 100)),
    ],
)
def test_a_cell_gets_its_label_once_from_its_requested_size(
    tokenizer: str, requested: float | None, kind: str, cell: Cell
) -> None:
    assert make_cell("en", tokenizer, requested, kind) == cell


def test_data_root_and_file_pattern(tmp_path: Path) -> None:
    write_lines(tmp_path / "yy.txt.gz", ["x"])
    study = Study(
        {
            "data_root": str(tmp_path),
            "languages": {"yy": None},
            "tokenizers": {"char": {}},
            "metrics": ["mu"],
        }
    )
    assert StudyPlan(study).corpora.source_files("yy") == [tmp_path / "yy.txt.gz"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"languages": {"zz": {"path": "nowhere/zz.txt"}}},
            r"language 'zz': file not found: nowhere/zz\.txt",
        ),
        (
            {"languages": {"zz": {}}},
            r"languages\.zz: give path, ud, url \+ sha256, chatterbot or dataset",
        ),
        (
            {"languages": {"zz": {"ud": "."}}},
            r"languages\.zz\.ud: no \.conllu or \.conllu\.gz files",
        ),
        (
            {"tokenizers": {"hf_bpe": {"languages": ["xx", "de"]}}},
            r"tokenizers\.hf_bpe\.languages: 'de' is not under languages \(known: en, xx\)",
        ),
        ({"languages": {"zz": {"chatterbot": "klingon"}}}, r"no language folder 'klingon'"),
        ({"tokenizers": {"sp_bpee": {}}}, r"unknown tokenizer 'sp_bpee'; valid choices: .*char, "),
        ({"metrics": ["mu", "nuu"]}, r"unknown metric\(s\) nuu"),
    ],
)
def test_bad_config_values_give_one_line(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        _plan(tmp_path, **changes)


def test_a_tokenizer_can_be_limited_to_some_languages(tmp_path: Path) -> None:
    plan = _plan(tmp_path, tokenizers={"hf_bpe": {"languages": ["xx"]}, "char": {}})
    assert plan.tokenizers.cells() == [
        Cell("en", "char", "full", None),
        Cell("xx", "char", "full", None),
        Cell("xx", "hf_bpe", "100", 100),
        Cell("xx", "hf_bpe", "300", 300),
    ]
    models = {"languages": ["en"], "tokenizers": ["hf_bpe"], "vocab_sizes": [100], "tasks": ["mlm"]}
    with pytest.raises(TokstudyError, match=r"models\.languages: 'hf_bpe' is not trained on 'en'"):
        _plan(tmp_path, tokenizers={"hf_bpe": {"languages": ["xx"]}}, models=models)


@pytest.mark.shared
def test_a_ud_treebank_is_a_corpus_source() -> None:
    treebank = SHARED / "ud" / "UD_German-GSD"
    config = {
        "languages": {"de": {"ud": str(treebank)}},
        "vocab_sizes": [100],
        "tokenizers": {"hf_bpe": {}},
    }
    files = StudyPlan(Study(config)).corpora.source_files("de")
    assert [path.name for path in files] == ["de_gsd-ud-dev.conllu.gz", "de_gsd-ud-test.conllu.gz"]


def test_missing_sizes_is_an_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path, vocab_sizes=None, tokenizers={"hf_bpe": {}})
    with pytest.raises(TokstudyError, match=r"tokenizers\.hf_bpe\.vocab_sizes"):
        plan.tokenizers.sizes("hf_bpe")


def test_multilingual_jobs_specs_and_sampling(tmp_path: Path) -> None:
    section = {"tokenizers": ["sp_bpe", "bbpe"], "vocab_sizes": [900, 600, 900]}
    plan = _plan(
        tmp_path,
        tokenizers={"sp_bpe": {"vocab_sizes": [50], "params": {"split_digits": True}}},
        analyses={"multilingual": section},
    )
    analyses = plan.analyses
    assert analyses["multilingual"].languages() == ["en", "xx"]  # default: every language
    assert [(j.language, j.tokenizer, j.size) for j in analyses["multilingual"].cells()] == [
        ("en+xx", "bbpe", "600"),
        ("en+xx", "bbpe", "900"),
        ("en+xx", "sp_bpe", "600"),
        ("en+xx", "sp_bpe", "900"),
    ]
    spec = analyses["multilingual"].spec("bbpe", "600")
    assert (spec["vocab_size"], spec["params"], spec["label"]) == (600, {}, "en+xx")
    assert analyses["multilingual"].spec("sp_bpe", "900")["params"] == {"split_digits": True}
    assert analyses["multilingual"].sampling() == {
        "temperature": 5.0,
        "seed": 42,
        "total_lines": None,
    }
    assert _plan(tmp_path).analyses["multilingual"].cells() == []


def test_a_parity_aware_multilingual_tokenizer_gets_the_mix_languages(tmp_path: Path) -> None:
    section = {"tokenizers": ["parity_bpe", "hf_bpe"], "vocab_sizes": [600]}
    balance = {"dev_pud_root": "../shared/ud"}
    plan = _plan(
        tmp_path,
        tokenizers={"hf_bpe": {}, "parity_bpe": {"params": balance}},
        analyses={"multilingual": section},
    )
    multilingual = plan.analyses["multilingual"]
    languages = plan.study.out(multilingual.MULTILINGUAL_LANGUAGES)
    assert multilingual.spec("parity_bpe", "600")["params"] == {
        **balance,
        "languages_file": languages,
    }
    assert "languages_file" not in multilingual.spec("hf_bpe", "600")["params"]


@pytest.mark.parametrize("tokenizers", [{"hf_bpe": {}}, {"parity_bpe": {"params": {}}}])
def test_a_parity_aware_tokenizer_without_dev_set_or_ratios_names_the_key(
    tmp_path: Path, tokenizers: dict
) -> None:
    section = {"tokenizers": ["parity_bpe"], "vocab_sizes": [600]}
    with pytest.raises(
        TokstudyError,
        match=r"^config key tokenizers\.parity_bpe\.params: a parity-aware tokenizer needs a "
        r"parallel dev set or ratios: give one of dev_pud_root, dev_udhr_root, ratio$",
    ):
        _plan(tmp_path, tokenizers=tokenizers, analyses={"multilingual": section})


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"languages": ["en", "zz"]}, r"multilingual\.languages: language 'zz' is not in lang"),
        (
            {"languages": ["en", "en"]},
            r"multilingual\.languages: .* at least two languages, got en$",
        ),
        ({"languages": []}, r"multilingual\.languages is empty$"),
        ({"tokenizers": []}, r"multilingual\.tokenizers is empty$"),
        ({"tokenizers": None}, r"multilingual\.tokenizers is missing$"),
        ({"vocab_sizes": None}, r"multilingual\.vocab_sizes is missing$"),
        ({"vocab_sizes": [1]}, r"multilingual\.vocab_sizes: 1 is below 2$"),
        (
            {"tokenizers": ["sp_bpee"]},
            r"multilingual\.tokenizers: unknown tokenizer 'sp_bpee'; valid choices: bbpe, ",
        ),
        ({"tokenizers": ["char"]}, r"multilingual\.tokenizers: 'char' has no vocabulary size"),
        ({"temperature": 0}, r"multilingual\.temperature must be positive, got 0$"),
        ({"total_lines": -5}, r"multilingual\.total_lines must be positive, got -5$"),
    ],
)
def test_bad_multilingual_config_gives_one_line_naming_the_key(
    tmp_path: Path, section: dict, message: str
) -> None:
    config = {"tokenizers": ["sp_bpe"], "vocab_sizes": [500], **section}
    config = {key: value for key, value in config.items() if value is not None}
    with pytest.raises(TokstudyError, match=rf"^config key analyses\.{message}") as error:
        _plan(tmp_path, analyses={"multilingual": config})
    assert "\n" not in str(error.value)


def test_a_misspelled_tokenizer_under_tokenizer_params_is_a_config_error(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "en.txt", ["a b c"] * 20)
    config = {
        "languages": {"en": {"path": str(corpus), "tokenizer_params": {"sp_bppe": {}}}},
        "vocab_sizes": [100],
        "tokenizers": {"sp_bpe": {}},
    }
    with pytest.raises(
        TokstudyError,
        match=r"languages\.en\.tokenizer_params\.sp_bppe: unknown tokenizer 'sp_bppe'; valid",
    ):
        StudyPlan(Study(config, base=tmp_path))


def test_a_model_on_several_gpus_asks_slurm_for_them(tmp_path: Path) -> None:
    models = {
        "languages": ["xx"],
        "tokenizers": ["char"],
        "vocab_sizes": [100],
        "tasks": ["clm"],
        "clm": {"devices": 2, "device": "cuda", "batch_size": 4},
    }
    plan = _plan(tmp_path, models=models)
    assert plan.resources("train_clm")["gpu"] == 2
    assert "gpu" not in plan.resources("evaluate_clm")
    on_cpu = _plan(tmp_path, models={**models, "clm": {"devices": 2, "device": "cpu"}})
    assert "gpu" not in on_cpu.resources("train_clm")  # gloo processes need no GPU
    with pytest.raises(TokstudyError) as error:  # at the plan's start, not at the rule
        _plan(tmp_path, models=models, resources={"train_clm": {"gpu": 1}})
    assert str(error.value) == (
        "config key resources.train_clm.gpu (1) differs from models.clm.devices (2): "
        "the job needs one GPU per process"
    )
