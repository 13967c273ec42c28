"""The study model: its planners' targets and checks, one home per default, one table of
rule resources, and .smk files that never read the config."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, write_lines

from tokstudy.errors import TokstudyError
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study
from tokstudy.workflow.study.defaults import DEFAULTS, SECTION_DEFAULTS
from tokstudy.workflow.study.resources import RULES, rule_resources

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
RULE_FILES = sorted((REPO / "workflow/rules").rglob("*.smk"))


def _config(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    """A tiny study: two languages from files, two tokenizers, one metric."""
    config = {
        "results_dir": "res",
        "languages": {
            "xx": {"path": str(write_lines(tmp_path / "xx.txt", ["a b"]))},
            "yy": {"path": str(write_lines(tmp_path / "yy.txt", ["c d"]))},
        },
        "tokenizers": {"sp_bpe": {"vocab_sizes": [50]}, "char": {"languages": ["xx"]}},
        "metrics": ["mu"],
    }
    return config | changes


# --- targets ---------------------------------------------------------------------------


def test_the_planners_targets_of_a_tiny_study(tmp_path: Path) -> None:
    words = {"segmentation": {"vocab_size": 50, "words": {"xx": ["ab"]}}}
    plan = StudyPlan(Study(_config(tmp_path, analyses=words)))
    assert plan.corpora.targets() == [
        f"res/corpora/{language}/{name}"
        for language in ("xx", "yy")
        for name in ("train.txt", "heldout.txt", "stats.json")
    ]
    assert plan.tokenizers.targets() == [
        "res/tokenizers/xx/char/full",
        "res/tokenizers/xx/sp_bpe/50",
        "res/tokenizers/yy/sp_bpe/50",
    ]
    metrics = plan.metrics.targets()
    assert metrics[:2] == ["res/tables/metrics.csv", "res/tables/cost.csv"]
    assert "res/plots/metrics/mu_heldout.pdf" in metrics and len(metrics) == 4 + 4 + 4
    assert plan.analyses.targets() == [
        "res/tables/analysis/segmentation_xx.csv",
        "res/tables/analysis/segmentation_xx.md",
    ]
    assert plan.analyses["correlation"].targets() == []  # no downstream stage
    assert plan.models.targets() == plan.nmt.targets() == []
    sources = plan.cost_sources()
    assert [(s["language"], s["tokenizer"], s["step"]) for s in sources[:3]] == [
        ("xx", "char", "train"),
        ("xx", "char", "metrics"),
        ("xx", "char", "job"),
    ]
    assert sources[0]["figures"] == sources[1]["figures"] == "res/costs/xx/char/full.json"
    assert sources[0]["texts"] == ["res/corpora/xx/train.txt"]
    assert sources[1]["texts"] == ["res/corpora/xx/train.txt", "res/corpora/xx/heldout.txt"]
    assert sources[2]["figures"] == "res/benchmarks/train_tokenizer/xx/char/full.tsv"
    assert sources[2]["texts"] == sources[1]["texts"]
    assert len(sources) == 3 * 3  # three rows of three trained cells
    assert plan.page.targets() == [
        "res/index.html",
        "res/tables/recommendation_xx.csv",
        "res/tables/recommendation_yy.csv",
    ]
    assert plan.page.tables() == {"cost": "res/tables/cost.csv"}  # no analysis table
    assert plan.page.words() == {"xx": ["ab"]}
    assert plan.page.plots() == [
        f"res/plots/{name}.png" for name in ("cost", "metrics/mu_train", "metrics/mu_heldout")
    ]
    everything = plan.targets()
    assert len(everything) == len(set(everything)) == 6 + 3 + 12 + 2 + 3


def test_a_pretrained_cell_costs_its_metric_job(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "tokenizer.json", ["{}"])
    pretrained = {"gpt": {"path": str(source), "languages": ["yy"]}}
    plan = StudyPlan(Study(_config(tmp_path, pretrained=pretrained)))
    sources = plan.metrics.cost_sources()
    trained = [s for s in sources if s["size"] != "pretrained"]
    assert {s["step"] for s in trained} == {"train", "metrics", "job"}
    assert [s for s in sources if s["size"] == "pretrained"] == [
        {
            "language": "yy",
            "tokenizer": "gpt",
            "size": "pretrained",
            "vocab_size": None,
            "step": "metrics",
            "figures": "res/benchmarks/compute_metrics/yy/gpt/pretrained.tsv",
            "texts": ["res/corpora/yy/train.txt", "res/corpora/yy/heldout.txt"],
        }
    ]


def test_the_frequency_plots_name_each_language_s_tokenizers_at_the_plotted_size(
    tmp_path: Path,
) -> None:
    source = write_lines(tmp_path / "tokenizer.json", ["{}"])
    pretrained = {"gpt": {"path": str(source), "languages": ["yy"]}}
    tokenizers = {"sp_bpe": {"vocab_sizes": [50, 80]}, "char": {}}
    plots = {"frequency_vocab_size": 80, "skip_top_ranks": 1}
    config = _config(tmp_path, pretrained=pretrained, tokenizers=tokenizers, plots=plots)
    plan = StudyPlan(Study(config)).metrics
    assert {
        language: {label: (c.tokenizer, c.size) for label, c in cells.items()}
        for language, cells in plan.frequency_plots().items()
    } == {  # char has no size of its own: it is not plotted
        "xx": {"sp_bpe": ("sp_bpe", "80")},
        "yy": {"sp_bpe": ("sp_bpe", "80"), "gpt (pretrained)": ("gpt", "pretrained")},
    }
    without_size = _config(tmp_path, plots={"skip_top_ranks": 1})
    assert StudyPlan(Study(without_size)).metrics.frequency_plots() == {}


def test_the_cost_table_has_the_cells_then_the_multilingual_tokenizers(tmp_path: Path) -> None:
    multilingual = {"multilingual": {"tokenizers": ["sp_bpe"], "vocab_sizes": [60, 40]}}
    plan = StudyPlan(Study(_config(tmp_path, analyses=multilingual)))
    sources = plan.cost_sources()
    assert sources[: len(plan.metrics.cost_sources())] == plan.metrics.cost_sources()
    assert sources[len(plan.metrics.cost_sources()) :] == [
        {
            "language": "xx+yy",
            "tokenizer": "sp_bpe",
            "size": size,
            "vocab_size": vocab_size,
            "step": "train_multilingual",
            "figures": f"res/benchmarks/train_multilingual_tokenizer/sp_bpe/{size}.tsv",
            "texts": ["res/multilingual/corpus/train.txt"],
        }
        for size, vocab_size in (("40", 40), ("60", 60))
    ]


def test_the_downstream_planners_list_their_tables(tmp_path: Path) -> None:
    models = {"languages": ["xx"], "tokenizers": ["sp_bpe"], "vocab_sizes": [50], "tasks": ["mlm"]}
    plan = StudyPlan(Study(_config(tmp_path, models=models, nmt={"tokenizers": ["sp_bpe"]})))
    assert plan.models.targets() == [
        "res/tables/models/results.tsv",
        "res/tables/models/seed_summary.tsv",
        "res/tables/models/seed_summary.md",
        "res/tables/models/wilcoxon.tsv",
        "res/tables/models/wilcoxon.md",
        "res/tables/models/flagged_runs.tsv",
        "res/tables/models/flagged_runs.md",
        "res/plots/models/noise.png",
        "res/plots/models/noise.pdf",
    ]
    assert "res/tables/nmt/table1_bleu.csv" in plan.nmt.targets()
    assert "res/tables/analysis/correlation.csv" in plan.analyses["correlation"].targets()
    assert set(plan.nmt.targets()) <= set(plan.targets())


def test_the_line_aligned_parity_compares_two_held_out_corpora(tmp_path: Path) -> None:
    parity = {"parity": {"reference": "xx", "target": "yy"}}
    analyses = StudyPlan(Study(_config(tmp_path, analyses=parity))).analyses
    assert analyses["parity"].texts() == {
        "reference_text": "res/corpora/xx/heldout.txt",
        "target_text": "res/corpora/yy/heldout.txt",
    }
    assert [(a.tokenizer, b.language) for a, b in analyses["parity"].pairs()] == [("sp_bpe", "yy")]
    assert "res/tables/analysis/parity.csv" in analyses.targets()
    assert StudyPlan(Study(_config(tmp_path))).analyses["parity"].texts() == {}


# --- one check per section, one line each --------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"languages": {"zz": {}}, "tokenizers": {"sp_bpe": {"vocab_sizes": [50]}}},
            "config key languages.zz: give path, ud, url + sha256, chatterbot or dataset, or set "
            "data_root",
        ),
        (
            {"tokenizers": {"char": {"languages": ["qq"]}}},
            "config key tokenizers.char.languages: 'qq' is not under languages (known: xx, yy)",
        ),
        (
            {"metrics": ["mu", "nope"]},
            None,  # the metric registry's own message, checked below to be one line
        ),
        (
            {"analyses": {"segmentation": {"vocab_size": 50, "words": {"qq": ["a"]}}}},
            "config key analyses.segmentation.words.qq: not in languages",
        ),
        (
            {"models": {"languages": ["qq"], "tokenizers": ["sp_bpe"], "vocab_sizes": [50]}},
            "config key models.languages: 'qq' is not trained by this study (trained: xx, yy)",
        ),
        (
            {"nmt": {"tokenizers": ["sp_bpe"], "vocab_sizes": [], "seeds": [1]}},
            "config keys nmt.tokenizers, vocab_sizes, seeds, directions: empty",
        ),
    ],
    ids=["corpora", "tokenizers", "metrics", "analyses", "models", "nmt"],
)
def test_each_planner_rejects_a_bad_section_in_one_line(
    tmp_path: Path, changes: dict[str, Any], message: str | None
) -> None:
    with pytest.raises(TokstudyError) as error:
        StudyPlan(Study(_config(tmp_path, **changes)))
    text = str(error.value)
    assert "\n" not in text
    if message is None:
        assert "nope" in text
    else:
        assert text == message


# --- defaults --------------------------------------------------------------------------


def _schema_defaults(node: Any, path: str = "") -> list[str]:
    """Every place of the schema that declares a ``default``."""
    if isinstance(node, dict):
        found = [path] if "default" in node else []
        for key, value in node.items():
            found += _schema_defaults(value, f"{path}.{key}")
        return found
    if isinstance(node, list):
        return [p for item in node for p in _schema_defaults(item, path)]
    return []


def _default_keys() -> list[str]:
    keys = []
    for key, value in DEFAULTS.items():
        keys += [key] if not isinstance(value, dict) or not value else list(value)
    return keys + [key for section in SECTION_DEFAULTS.values() for key in section]


def test_each_default_has_one_home() -> None:
    assert _schema_defaults(SCHEMA) == []  # the schema checks shapes only
    sources = [*sorted((REPO / "src/tokstudy").rglob("*.py")), *RULE_FILES, REPO / "Snakefile"]
    sources = [path for path in sources if path.name != "defaults.py"]
    repeated = [
        f"{path.relative_to(REPO)}: {key}"
        for path in sources
        for key in _default_keys()
        # a fallback for a defaulted key: .get("key", value) or .get("key") or value
        if re.search(rf"\.get\(\s*[\"']{key}[\"']\s*(,|\)\s*or\b)", path.read_text())
    ]
    assert repeated == []


def test_defaults_fill_what_a_study_leaves_out(tmp_path: Path) -> None:
    config = _config(tmp_path, analyses={"multilingual": {"tokenizers": ["sp_bpe"]}})
    config["analyses"]["multilingual"]["vocab_sizes"] = [50]
    del config["results_dir"]
    study = Study(config)
    plan = StudyPlan(study)
    assert study.results_dir == "results" and study.seed == 42
    assert plan.tokenizers.train_spec(plan.tokenizers.cells()[0])["size_policy"] == "error"
    assert plan.corpora.settings("xx")["heldout"] == 0.1
    assert plan.analyses["multilingual"].sampling()["temperature"] == 5.0
    assert "seed" not in config  # the study's own copy gets the defaults


# --- resources -------------------------------------------------------------------------


#: a rule's name in a rule file
RULE_NAME = re.compile(r"^\s*rule (\w+):", re.M)


def _rules_with_jobs() -> set[str]:
    names = {name for path in RULE_FILES for name in RULE_NAME.findall(path.read_text())}
    return {name for name in names if not name.endswith("_outputs")}


def test_every_rule_has_its_resources_in_the_one_table() -> None:
    assert set(RULES) == _rules_with_jobs()
    keys = set(SCHEMA["properties"]["resources"]["propertyNames"]["enum"])
    assert {entry.key for entry in RULES.values()} <= keys
    for path in RULE_FILES:
        text = path.read_text()
        declared = re.findall(r'threads: planners\.threads\("(\w+)"\)', text)
        rules = RULE_NAME.findall(text)
        assert declared == [rule for rule in rules if rule in RULES], path.name


def test_no_rule_file_or_planner_sizes_a_rule_itself() -> None:
    # threads, memory and run time come from study/resources.py, the study's resources:
    # and a profile only: a rule asks planners.threads/resources, a planner sets none
    wing = REPO / "src/tokstudy/workflow"
    planners = [
        path
        for path in sorted(wing.rglob("*.py"))
        # resources.py is the table; the study's plan (workflow/plan.py) hands its rows to
        # the rules
        if (path.name.endswith("plan.py") and path != wing / "plan.py")
        or path == wing / "models/section.py"
        or (path.parent.name == "study" and path.name != "resources.py")
    ]
    sized = [
        f"{path.name}: {line.strip()}"
        for path in [*RULE_FILES, REPO / "Snakefile", *planners]
        for line in path.read_text().splitlines()
        if re.search(r"\bmem_mb\b|\bruntime\b|threads:\s*\d", line.split("#", 1)[0])
        and "planners.resources" not in line
    ]
    assert len(planners) > 10
    assert sized == []


def test_a_study_overrides_the_rule_defaults_entry_by_entry() -> None:
    assert rule_resources("train_multilingual_tokenizer", {}) == {
        "threads": 1,
        "mem_mb": 4000,
        "runtime": 60,
    }
    study_resources = {
        "default": {"mem_mb": 500, "runtime": 5},
        "train_tokenizer": {"threads": 4, "slurm_partition": "big"},
    }
    assert rule_resources("train_multilingual_tokenizer", study_resources) == {
        "threads": 4,
        "mem_mb": 500,
        "runtime": 5,
        "slurm_partition": "big",
    }
    assert rule_resources("cost_table", study_resources)["threads"] == 1
    # a rule without a row (a new analysis's) takes the default entry's sizes
    assert rule_resources("new_rule", study_resources) == {
        "threads": 1,
        "mem_mb": 500,
        "runtime": 5,
    }


# --- the .smk files ask the study ------------------------------------------------------


def test_no_rule_file_reads_the_config() -> None:
    reading = [
        f"{path.name}:{number}: {line.strip()}"
        for path in RULE_FILES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        # config[...], config.get, `in config`; a rule's keyword argument `config=` is not it
        if re.search(r"(?<![\w.])config\b(?!\w|\s*=[^=])", line.split("#", 1)[0])
    ]
    assert reading == []


# every folder directly under results_dir; its files' patterns belong to a planner
RESULTS_FOLDERS = (
    "benchmarks|corpora|costs|downloads|frequencies|logs|metrics|models|multilingual|nmt|plots"
    "|pretrained|tables|tokenizers"
)
LITERAL_RESULTS_PATH = re.compile(
    rf"""\bout\(\s*[rf]?["']|\{{RESULTS\}}|[rf]?["'](?:{RESULTS_FOLDERS})/"""
)


def test_no_rule_file_spells_a_results_path() -> None:
    # a path under results_dir is a planner's pattern (or log_path / benchmark_path), filled
    # in by out(...): never a string literal in a rule file
    literal = [
        f"{path.name}:{number}: {line.strip()}"
        for path in [*RULE_FILES, REPO / "Snakefile"]
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if LITERAL_RESULTS_PATH.search(line.split("#", 1)[0])
    ]
    assert literal == []


def test_each_results_path_has_one_planner_that_owns_it(tmp_path: Path) -> None:
    plan = StudyPlan(Study(_config(tmp_path)))
    models = plan.models
    stages = [plan.corpora, plan.tokenizers, plan.metrics, plan.nmt]
    stages += [models, models.section, *models.planners()]
    planners = [*stages, *plan.analyses.values()]
    patterns = [
        (type(planner).__name__, name, value)
        for planner in planners
        for name, value in vars(type(planner)).items()
        if name.isupper() and not name.endswith("_CELL")  # a cell is part of a path
    ]
    owners: dict[str, list[str]] = {}
    for owner, name, pattern in patterns:
        owners.setdefault(pattern, []).append(f"{owner}.{name}")
        assert re.fullmatch(rf"(?:{RESULTS_FOLDERS})/[^/].*[^/]", pattern), f"{owner}.{name}"
    assert {pattern: names for pattern, names in owners.items() if len(names) > 1} == {}
    assert len(patterns) > 40
