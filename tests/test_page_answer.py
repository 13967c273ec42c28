"""The answer at the top of the study page: per-line counts that sum to the metric pass's,
bootstrap intervals over held-out lines, the recommended cell and the cells the held-out
text cannot tell from it; the page opens on the config's first language."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from page_support import LANGUAGES, WORDS, tiny_study
from test_study_page import island

from tokstudy.metrics.compute import BATCH_COUNTS, LINE_RATIOS, compute_metrics, line_counts
from tokstudy.report.page.build import build_study_page, language_name
from tokstudy.report.page.recommend import Criterion, StudyTables
from tokstudy.report.page.uncertainty import (
    Estimate,
    bootstrap_lines,
    cell_estimates,
    summarize,
)
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.registry import adapter_class
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

FERTILITY = Criterion("fertility", "fertility (tokens per word)", "lower")
BYTES = Criterion("bytes_per_token", "bytes per token", "higher")
COST = Criterion("train_seconds", "training time (s)", "lower")


@pytest.fixture(scope="module", params=["hf_bpe", "sp_unigram", "hf_bytelevel_bpe", "hft"])
def tokenizer(request: pytest.FixtureRequest, english_corpus: Path):
    return adapter_class(request.param).train(english_corpus, TrainSpec(300, label="en"))


def test_line_counts_sum_to_the_metric_pass(
    tokenizer, english_lines: list[str], tmp_path: Path
) -> None:
    lines = english_lines[:300]
    counts = line_counts(tokenizer, lines, batch_lines=64)
    assert set(counts) == set(BATCH_COUNTS)
    assert all(len(column) == len(lines) for column in counts.values())
    # per line, by hand: the tokens of its own encoding, its characters and bytes
    assert counts["tokens"].tolist() == [len(ids) for ids in tokenizer.encode_batch(lines)]
    assert counts["chars"].tolist() == [len(line) for line in lines]
    assert counts["utf8_bytes"].tolist() == [len(line.encode()) for line in lines]
    assert (counts["continued_words"] <= counts["words"]).all()
    metrics, _ = compute_metrics(tokenizer, write_lines(tmp_path / "c.txt", lines))
    for name, (numerator, denominator) in LINE_RATIOS.items():
        value = counts[numerator].sum() / counts[denominator].sum()
        assert value == pytest.approx(metrics[name], rel=1e-12), name


def test_an_interval_brackets_the_value_and_matches_a_plain_bootstrap(
    tokenizer, english_lines: list[str]
) -> None:
    lines = english_lines[:200]
    found = cell_estimates(tokenizer, lines, ["fertility"], seed=7, resamples=4000)["fertility"]
    counts = line_counts(tokenizer, lines)
    tokens, words = counts["word_tokens"], counts["words"]
    assert found.value == pytest.approx(tokens.sum() / words.sum())
    assert found.low < found.value < found.high
    # an independent bootstrap: numpy draws of line indices, the ratio of the drawn sums
    draws = np.random.default_rng(0).integers(0, len(lines), size=(4000, len(lines)))
    ratios = tokens[draws].sum(axis=1) / words[draws].sum(axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    width = high - low
    assert found.low == pytest.approx(low, abs=0.1 * width)
    assert found.high == pytest.approx(high, abs=0.1 * width)


def test_identical_lines_give_no_spread_and_one_line_no_interval(tokenizer) -> None:
    same = cell_estimates(tokenizer, ["the same line"] * 30, ["fertility"], seed=1)["fertility"]
    assert same.low == same.value == same.high
    one = cell_estimates(tokenizer, ["one line only"], ["fertility"], seed=1)["fertility"]
    assert math.isnan(one.low) and math.isnan(one.high) and not math.isnan(one.value)


def test_long_held_out_splits_are_sampled_with_the_seed() -> None:
    lines = [f"line {i}" for i in range(100)]
    assert bootstrap_lines(lines, 3, limit=200) == lines
    sample = bootstrap_lines(lines, 3, limit=10)
    assert len(sample) == 10 and sample == bootstrap_lines(lines, 3, limit=10)
    assert sample == sorted(sample, key=lambda line: int(line.split()[1]))  # in file order


def _panel(**cells: tuple[float, float, float]) -> pd.DataFrame:
    """A panel table: tokenizer name → (fertility, bytes per token, training seconds)."""
    return pd.DataFrame(
        [
            {"tokenizer": name, "size": "300", "kind": "trained", "fertility": f,
             "bytes_per_token": b, "train_seconds": t, "flags": ""}
            for name, (f, b, t) in cells.items()
        ]
    )  # fmt: skip


def test_the_recommended_cell_and_those_it_cannot_be_told_from() -> None:
    # a: best fertility; b overlaps a on both metrics; c overlaps on fertility only;
    # d is far on both. Cost (train_seconds) has no interval: not ranked on.
    frame = _panel(a=(2.0, 4.0, 9.0), b=(2.05, 3.95, 1.0), c=(2.1, 3.5, 1.0), d=(3.0, 3.0, 1.0))
    spans = {  # (fertility, low, high), (bytes per token, low, high)
        "a": ((2.0, 1.9, 2.1), (4.0, 3.9, 4.1)),
        "b": ((2.05, 1.95, 2.15), (3.95, 3.85, 4.05)),
        "c": ((2.1, 2.0, 2.2), (3.5, 3.4, 3.6)),
        "d": ((3.0, 2.9, 3.1), (3.0, 2.9, 3.1)),
    }
    estimates = {
        (name, "300"): {"fertility": Estimate(*f), "bytes_per_token": Estimate(*b)}
        for name, (f, b) in spans.items()
    }
    summary, table = summarize(frame, [FERTILITY, BYTES, COST], estimates, 120)
    assert summary["cell"] == {"tokenizer": "a", "size": "300"}
    assert [c["tokenizer"] for c in summary["indistinguishable"]] == ["b"]
    assert summary["why"] == (
        "the lowest fertility (tokens per word) of the cells that are Pareto-optimal on "
        "fertility (tokens per word) and bytes per token"
    )
    assert [m["name"] for m in summary["metrics"]] == ["fertility", "bytes_per_token"]
    assert {k: summary["metrics"][0][k] for k in ("value", "low", "high")} == {
        "value": 2.0, "low": 1.9, "high": 2.1,
    }  # fmt: skip
    assert summary["lines"] == 120 and "(1000 resamples" in summary["method"]
    assert table["recommended"].tolist() == [True, False, False, False]
    assert table["indistinguishable"].tolist() == [False, True, False, False]
    assert table["fertility_low"].tolist() == [1.9, 1.95, 2.0, 2.9]
    assert table["bytes_per_token_high"].tolist() == [4.1, 4.05, 3.6, 3.1]


def test_nothing_to_rank_is_said() -> None:
    frame = _panel(a=(2.0, 4.0, 9.0))
    summary, table = summarize(frame, [COST], {}, 0)
    assert summary["cell"] is None and summary["why"].startswith("nothing to rank")
    assert not table["recommended"].any()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(1, 5), st.floats(0.01, 0.5), st.floats(1, 5), st.floats(0.01, 0.5)),
        min_size=1,
        max_size=6,
    )
)
def test_the_recommended_cell_is_pareto_optimal_and_the_best_of_them(cells: list) -> None:
    names = [f"t{i}" for i in range(len(cells))]
    frame = _panel(**{n: (f, b, 1.0) for n, (f, _, b, _) in zip(names, cells, strict=True)})
    estimates = {
        (n, "300"): {
            "fertility": Estimate(f, f - fw, f + fw),
            "bytes_per_token": Estimate(b, b - bw, b + bw),
        }
        for n, (f, fw, b, bw) in zip(names, cells, strict=True)
    }
    summary, _ = summarize(frame, [FERTILITY, BYTES], estimates, 10)
    chosen = summary["cell"]["tokenizer"]
    # by brute force: the cells no other cell is at least as good as on both metrics and
    # better on one; the chosen one is among them with their lowest fertility
    columns = frame[["fertility", "bytes_per_token"]].itertuples(index=False)
    values = dict(zip(names, columns, strict=True))

    def dominates(x: tuple, y: tuple) -> bool:
        return x[0] <= y[0] and x[1] >= y[1] and (x[0] < y[0] or x[1] > y[1])

    optimal = [n for n in names if not any(dominates(values[o], values[n]) for o in names)]
    assert chosen in optimal
    assert values[chosen][0] == min(values[n][0] for n in optimal)
    # indistinguishable: exactly the cells whose intervals overlap the chosen one's on both
    mine = estimates[(chosen, "300")]
    expected = [
        n
        for n in names
        if n != chosen
        and all(
            mine[k].low <= estimates[(n, "300")][k].high
            and estimates[(n, "300")][k].low <= mine[k].high
            for k in ("fertility", "bytes_per_token")
        )
    ]
    assert [c["tokenizer"] for c in summary["indistinguishable"]] == expected


def test_the_page_opens_on_the_configs_first_language(tmp_path: Path) -> None:
    cells = tiny_study(tmp_path)
    order = ["fa", "en"]  # not alphabetical
    page = tmp_path / "index.html"
    build_study_page(
        cells,
        {language: tmp_path / "corpora" / language / "heldout.txt" for language in order},
        WORDS,
        {},
        StudyTables.read(tmp_path / "tables" / "metrics.csv", {}),
        [],
        page,
        {language: tmp_path / f"recommendation_{language}.csv" for language in LANGUAGES},
        seed=42,
        sample_count=3,
    )
    data = island(page)
    assert data["languages"] == order
    assert data["names"] == {"fa": "Persian (fa)", "en": "English (en)"}
    assert data["scripts"] == {"fa": "Arabic", "en": "Latin"}
    assert set(data["summary"]) == set(order)
    for language in order:
        summary = data["summary"][language]
        table = pd.read_csv(tmp_path / f"recommendation_{language}.csv", dtype={"size": str})
        best = table[table["recommended"]].iloc[0]
        assert summary["cell"] == {"tokenizer": best["tokenizer"], "size": best["size"]}
        assert summary["metrics"][0]["value"] == pytest.approx(best["fertility"])
        panel = data["recommendation"][language]["cells"]
        assert all(len(cell["intervals"]["fertility"]) == 2 for cell in panel)
    assert language_name("xx") == "xx"


def test_the_page_rule_pairs_each_language_with_its_table_in_the_configs_order() -> None:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    page = StudyPlan(Study(config, REPO)).page
    assert list(page.heldout()) == list(config["languages"]) == ["en", "de", "fa", "bn"]
    # the step zips heldout()'s languages with the rule's recommendation outputs
    tables = [Path(path).name for path in page.recommendations()]
    assert tables == [f"recommendation_{language}.csv" for language in page.heldout()]
