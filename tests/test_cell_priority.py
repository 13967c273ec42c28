"""Priorities of the cell jobs (:mod:`tokstudy.workflow.cell_priority`): measured cost first,
then an estimate from tokenizer and size; and the workflow giving them to Snakemake."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import CELL_COSTS
from workflow_support import snakemake

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.cells import Cell, make_cell
from tokstudy.tokenizers.registry import ADAPTERS
from tokstudy.workflow.cell_priority import (
    ESTIMATE_SIZE,
    CellCost,
    CellPriorities,
    read_cell_costs,
)
from tokstudy.workflow.metrics.plan import MetricsPlanner
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "cost.csv"
    path.write_text(CELL_COSTS, encoding="utf-8")
    return path


def test_a_cells_cost_is_its_train_and_metrics_cpu_seconds(table: Path) -> None:
    # by hand: 4.5 + 1.5, 8.0 + 2.0, 0.25 + 0.5; de/hf_bpe lacks its metrics phase
    assert read_cell_costs(table) == {
        ("en", "sp_unigram", "1000"): CellCost(6.0, 1000),
        ("en", "sp_unigram", "2000"): CellCost(10.0, 2000),
        ("en", "char", "full"): CellCost(0.75, ESTIMATE_SIZE),
    }


def test_a_cost_table_without_requested_sizes_gives_measured_cells_only(table: Path) -> None:
    old = (
        table.read_text().replace(",vocab_size,", ",").replace(",1000,", ",").replace(",2000,", ",")
    )
    table.write_text(old.replace("full,,", "full,"))
    priorities = CellPriorities.from_table(table)
    assert priorities.priority(make_cell("en", "sp_unigram", 2000)) == 1000
    assert priorities.per_item == {}  # no requested sizes: no rate per item
    assert priorities.seconds(make_cell("de", "sp_unigram", 4000)) == pytest.approx(
        ADAPTERS["sp_unigram"].cell_seconds * 4000 / ESTIMATE_SIZE
    )


def test_measured_cells_come_first_in_order_of_cost(table: Path) -> None:
    priorities = CellPriorities.from_table(table)
    assert priorities.priority(make_cell("en", "sp_unigram", 2000)) == 1000
    assert priorities.priority(make_cell("en", "sp_unigram", 1000)) == 600
    assert priorities.priority(make_cell("en", "char", None)) == 75


def test_an_unmeasured_cell_is_estimated_in_the_same_unit(table: Path) -> None:
    priorities = CellPriorities.from_table(table)
    # a tokenizer of the table: its median cost per vocabulary item (6/1000, 10/2000)
    assert priorities.seconds(make_cell("de", "sp_unigram", 4000)) == pytest.approx(0.0055 * 4000)
    assert priorities.seconds(make_cell("de", "char", None)) == pytest.approx(0.75)
    # a tokenizer the table lacks: the rough table, scaled by size
    assert priorities.seconds(make_cell("en", "hft", 4000)) == pytest.approx(
        ADAPTERS["hft"].cell_seconds * 4000 / ESTIMATE_SIZE
    )


def test_without_a_table_the_estimates_put_morfessor_then_sentencepiece_unigram_first() -> None:
    priorities = CellPriorities.from_table(None)
    order = sorted(ADAPTERS, key=lambda t: -priorities.priority(Cell("en", t, "8000", 8000)))
    # Morfessor (pure Python) trains slowest, bpe_knockout trains one for its reference
    assert order[:2] == ["morfessor", "bpe_knockout"] and order[-1] == "char"
    assert order[2:5] == ["sp_unigram", "sp_unigram_hftpretok", "unigram_sampling"]
    assert priorities.priority(make_cell("en", "sp_bpe", 16000)) == 2 * priorities.priority(
        make_cell("en", "sp_bpe", 8000)
    )


def test_a_broken_cost_table_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cost.csv"
    path.write_text("language,size\nen,1\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"not a tokstudy cost table \(no cpu_seconds, step"):
        read_cell_costs(path)


def _study(tmp_path: Path, **changes: object) -> MetricsPlanner:
    config = {
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "results_dir": "res",
        **changes,
    }
    return StudyPlan(Study(config, tmp_path)).metrics


def test_the_cost_table_is_the_studys_own_or_the_one_named(tmp_path: Path, table: Path) -> None:
    assert _study(tmp_path).cell_costs() == Path("res/tables/cost.csv")
    assert _study(tmp_path, cell_costs=str(table)).cell_costs() == table
    assert _study(tmp_path, cell_costs="cost.csv").cell_costs() == table
    with pytest.raises(TokstudyError, match=r"config key cell_costs: file not found: .*none\.csv"):
        _study(tmp_path, cell_costs="none.csv").cell_costs()


def test_a_corpus_takes_the_priority_of_its_longest_cell(tmp_path: Path, table: Path) -> None:
    plan = StudyPlan(
        Study(
            {
                "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
                "tokenizers": {"sp_unigram": {}, "char": {}},
                "vocab_sizes": [1000, 2000],
                "metrics": ["mu"],
                "results_dir": "res",
                "cell_costs": str(table),
            },
            tmp_path,
        )
    )
    cell = SimpleNamespace
    # by hand from CELL_COSTS: en's longest cell is sp_unigram 2000 (8.0 + 2.0 CPU s)
    assert plan.cell_priority(cell(language="en", tokenizer="sp_unigram", size="2000")) == 1000
    assert plan.corpus_priority(cell(language="en")) == 1000
    # de has no measured cell: the estimate of its sp_unigram 2000, 0.0055 s per item
    assert plan.corpus_priority(cell(language="de")) == math.ceil(100 * 0.0055 * 2000)


@pytest.mark.slow
def test_a_second_run_orders_the_cells_by_the_first_runs_costs(tmp_path: Path) -> None:
    config = tmp_path / "study.yaml"
    study = {
        "seed": 2,
        "languages": {"en": {"chatterbot": "english"}},
        "vocab_sizes": [150, 300],
        "tokenizers": {"sp_unigram": {}, "char": {}},
        "metrics": ["mu"],
        "plots": {"frequency_vocab_size": 150, "skip_top_ranks": 10},
    }
    config.write_text(yaml.safe_dump(study), encoding="utf-8")
    first = snakemake(tmp_path, "--cores", "2", config=config)
    assert first.returncode == 0, first.stderr[-3000:]
    measured = CellPriorities.from_table(tmp_path / "results/tables/cost.csv")
    assert len(measured.costs) == 3
    dry = snakemake(tmp_path, "-n", "-F", config=config)
    shown = {
        wildcards: int(priority)
        for wildcards, priority in re.findall(
            r"wildcards: language=en, (tokenizer=\w+, size=\w+)\n(?:.*\n)*?\s+priority: (\d+)",
            dry.stdout,
        )
    }
    # a measured cell's priority is its cost in centiseconds
    expected = {
        f"tokenizer={t}, size={s}": math.ceil(100 * cost.seconds)
        for (_, t, s), cost in measured.costs.items()
    }
    assert shown == expected
    corpus = re.search(r"rule prepare_corpus:\n(?:.*\n)*?\s+priority: (\d+)", dry.stdout)
    assert corpus and int(corpus.group(1)) == max(expected.values())
