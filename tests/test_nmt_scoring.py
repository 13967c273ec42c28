"""NMT scoring and reporting: sacreBLEU scores, paired bootstrap, Table 1, qualitative examples."""

from __future__ import annotations

import gzip
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED
from sacrebleu.metrics import BLEU, CHRF

from tokstudy.errors import TokstudyError
from tokstudy.nmt.report import (
    largest_differences,
    qualitative_markdown,
    seed_summaries,
    significance_table,
    table1,
    write_table,
)
from tokstudy.nmt.scoring import (
    _resampled_scores,
    _sentence_statistics,
    corpus_scores,
    missing_private_methods,
    paired_bootstrap,
)

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def references() -> list[str]:
    with gzip.open(SHARED / "corpora" / "hft2022" / "en.txt.gz", "rt", encoding="utf-8") as f:
        return [line.strip() for line in itertools.islice(f, 300)]


def _drop_words(lines: list[str], every: int) -> list[str]:
    """Each line without every ``every``-th word: a degraded system."""
    return [" ".join(w for i, w in enumerate(line.split()) if i % every) for line in lines]


def test_corpus_scores_record_sacrebleu_signatures(references: list[str]) -> None:
    perfect = corpus_scores(references, references)
    assert perfect["bleu"] == pytest.approx(100.0) and perfect["chrf"] == pytest.approx(100.0)
    assert perfect["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert "nc:6|nw:0" in perfect["chrf_signature"] and "version:" in perfect["chrf_signature"]
    degraded = corpus_scores(_drop_words(references, 3), references)
    assert 0 < degraded["bleu"] < 100 and 0 < degraded["chrf"] < 100
    with pytest.raises(TokstudyError, match="2 hypotheses for 3 references"):
        corpus_scores(["a", "b"], ["a", "b", "c"])


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
def test_bootstrap_interval_is_sacrebleu_on_resampled_test_sets(
    references: list[str], metric: str
) -> None:
    # oracle: the test sets scipy.stats.bootstrap draws (rng.integers(0, n, (B, n)) from
    # default_rng(seed)), each rescored from scratch by sacreBLEU's corpus_score
    baseline, system = _drop_words(references, 2), _drop_words(references, 5)
    samples, n = 40, len(references)
    result = paired_bootstrap(baseline, system, references, metric, samples=samples, seed=3)
    draws = np.random.default_rng(3).integers(0, n, (samples, n))
    scorer = {"bleu": BLEU, "chrf": CHRF}[metric]()

    def score(hypotheses: list[str], rows: np.ndarray) -> float:
        picked = [hypotheses[i] for i in rows]
        return scorer.corpus_score(picked, [[references[i] for i in rows]]).score

    deltas = np.array([score(system, rows) - score(baseline, rows) for rows in draws])
    assert (result.ci_low, result.ci_high) == pytest.approx(
        tuple(np.percentile(deltas, [2.5, 97.5]))
    )
    worse = (np.sum(deltas <= 0) + 1) / (samples + 1)
    better = (np.sum(deltas >= 0) + 1) / (samples + 1)
    assert result.p_value == pytest.approx(min(1, 2 * min(worse, better)))


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
def test_bootstrap_of_identical_systems_finds_no_difference(
    references: list[str], metric: str
) -> None:
    system = _drop_words(references, 4)
    result = paired_bootstrap(system, list(system), references, metric, samples=300, seed=0)
    assert result.delta == 0 and result.ci_low == 0 and result.ci_high == 0
    assert result.p_value == 1.0


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
def test_bootstrap_detects_a_clearly_better_system(references: list[str], metric: str) -> None:
    baseline, better = _drop_words(references, 2), _drop_words(references, 7)
    result = paired_bootstrap(baseline, better, references, metric, samples=1000, seed=0)
    scorer = {"bleu": BLEU, "chrf": CHRF}[metric]()
    assert result.baseline_score == pytest.approx(scorer.corpus_score(baseline, [references]).score)
    assert result.system_score == pytest.approx(scorer.corpus_score(better, [references]).score)
    assert result.delta > 5 and 0 < result.ci_low < result.delta < result.ci_high
    assert result.p_value < 0.01
    reverse = paired_bootstrap(better, baseline, references, metric, samples=1000, seed=0)
    assert reverse.delta == pytest.approx(-result.delta) and reverse.p_value < 0.01
    assert paired_bootstrap(baseline, better, references, metric, samples=1000, seed=0) == result


def test_bootstrap_of_a_tiny_difference_is_not_significant(references: list[str]) -> None:
    baseline = list(references)
    system = list(references)
    system[0] = _drop_words(references[:1], 3)[0]
    result = paired_bootstrap(baseline, system, references, "bleu", samples=500, seed=0)
    assert result.delta < 0 and result.p_value > 0.05


def _scores() -> pd.DataFrame:
    rows = []
    for direction, tokenizer, seed in itertools.product(
        ("en-mr", "mr-en"), ("hft", "sp_bpe"), (3, 1, 2)
    ):
        base = 6.0 if direction == "en-mr" else 9.0
        gain = 1.5 if tokenizer == "hft" else 0.0
        rows.append((direction, tokenizer, 3000, seed, base + gain + seed / 10, 30.0 + seed))
    return pd.DataFrame(
        rows, columns=["direction", "tokenizer", "vocab_size", "seed", "bleu", "chrf"]
    )


def test_table1_has_the_papers_layout() -> None:
    table = table1(_scores(), "bleu", baseline="sp_bpe")
    assert list(table.columns) == [
        "direction", "system", "run 1", "run 2", "run 3", "average", "std", "increment",
    ]  # fmt: skip
    assert list(zip(table.direction, table.system, strict=True)) == [
        ("en-mr", "sp_bpe (3000)"),
        ("en-mr", "hft (3000)"),
        ("mr-en", "sp_bpe (3000)"),
        ("mr-en", "hft (3000)"),
    ]
    hft = table.iloc[1]
    assert [hft["run 1"], hft["run 2"], hft["run 3"]] == pytest.approx([7.6, 7.7, 7.8])
    assert hft["average"] == pytest.approx(7.7) and hft["std"] == pytest.approx(0.1)
    assert hft["increment"] == pytest.approx(1.5)
    assert math.isnan(table.iloc[0]["increment"])
    duplicated = pd.concat([_scores(), _scores().iloc[:1]])
    with pytest.raises(TokstudyError, match="more than one run for direction=en-mr"):
        table1(duplicated)


def test_tables_are_written_as_csv_markdown_and_latex(tmp_path: Path) -> None:
    table = table1(_scores(), "bleu")
    csv = pd.read_csv(write_table(table, tmp_path / "t.csv"))
    assert list(csv.columns) == list(table.columns) and csv["average"].iloc[1] == 7.7
    markdown = write_table(table, tmp_path / "t.md").read_text()
    assert "| hft (3000)" in markdown and "7.70" in markdown
    assert " --    |" in markdown and "nan" not in markdown  # the missing increment, as in LaTeX
    latex = write_table(table, tmp_path / "t.tex").read_text()
    assert "\\begin{tabular}" in latex and "hft (3000)" in latex and "--" in latex
    with pytest.raises(TokstudyError, match=r"must be \.csv, \.md or \.tex"):
        write_table(table, tmp_path / "t.xlsx")


def test_seed_summaries_give_mean_and_std_per_system_and_metric() -> None:
    summary = seed_summaries(_scores())
    row = summary[(summary.tokenizer == "hft") & (summary.direction == "mr-en")]
    bleu = row[row.metric == "bleu"].iloc[0]
    assert bleu["mean"] == pytest.approx(10.7) and bleu["std"] == pytest.approx(0.1)
    assert bleu["n"] == 3 and len(summary) == 8


def test_significance_table_pairs_runs_by_direction_size_and_seed(references: list[str]) -> None:
    runs = pd.DataFrame(
        [
            ("en-mr", "sp_bpe", 3000, 1, _drop_words(references, 2)),
            ("en-mr", "hft", 3000, 1, _drop_words(references, 7)),
            ("en-mr", "sp_unigram", 3000, 1, _drop_words(references, 2)),
            ("en-mr", "hft", 3000, 2, _drop_words(references, 7)),  # no baseline with seed 2
        ],
        columns=["direction", "tokenizer", "vocab_size", "seed", "hypotheses"],
    )
    table = significance_table(runs, {"en-mr": references}, "sp_bpe", samples=200, seed=0)
    assert list(zip(table.tokenizer, table.metric, table.significant, strict=True)) == [
        ("hft", "bleu", True),
        ("hft", "chrf", True),
        ("sp_unigram", "bleu", False),
        ("sp_unigram", "chrf", False),
    ]
    assert set(table.seed) == {1}


def test_largest_differences_and_their_markdown(references: list[str]) -> None:
    sources = [f"source {i}" for i in range(len(references))]
    system_a = list(references)
    system_b = list(references)
    system_a[5] = "completely wrong"
    system_b[9] = _drop_words(references[9:10], 2)[0] + " | *"
    frame = largest_differences(sources, references, system_a, system_b, n=3)
    assert list(frame.line) == [10, 6]
    assert frame.difference.iloc[0] > 0 > frame.difference.iloc[1]
    text = qualitative_markdown(frame, "hft", "sp_bpe", "en-mr: hft vs sp_bpe")
    assert text.startswith("## en-mr: hft vs sp_bpe")
    assert "### Line 10:" in text and "in favour of hft" in text and "in favour of sp_bpe" in text
    assert f"- **reference:** {references[5]}".replace(".", "") in text.replace(".", "")
    assert "\\| \\*" in text
    same = largest_differences(sources, references, references, references, n=3)
    assert same.empty and "equal sentence BLEU" in qualitative_markdown(same, "a", "b", "t")


def test_sacrebleus_private_methods_are_where_the_bootstrap_expects_them() -> None:
    import sacrebleu

    assert missing_private_methods() == [], (
        f"sacreBLEU {sacrebleu.__version__} moved {missing_private_methods()}: "
        "tokstudy.nmt.scoring's paired bootstrap needs them (see PRIVATE_METHODS)"
    )


def test_the_private_statistics_are_sacrebleus_public_ones() -> None:
    # BLEU's per-sentence statistics, read privately, are the public sentence score's
    # lengths, counts and totals; summed, the private score is the public corpus score
    hypotheses = ["the cat sat on the mat", "a dog", "hello there world"]
    references = ["the cat is on the mat", "the dog", "hello world"]
    metric = BLEU()
    statistics = _sentence_statistics(metric, hypotheses, references)
    for row, hyp, ref in zip(statistics, hypotheses, references, strict=True):
        public = BLEU(effective_order=True).sentence_score(hyp, [ref])
        assert list(row) == [public.sys_len, public.ref_len, *public.counts, *public.totals]
    summed = _resampled_scores(metric, statistics, np.ones((1, 3)))[0]
    assert summed == pytest.approx(metric.corpus_score(hypotheses, [references]).score)


def test_a_sacrebleu_without_the_private_methods_is_named_with_its_version(
    monkeypatch, references: list[str]
) -> None:
    import sacrebleu

    monkeypatch.setattr(CHRF, "_compute_score_from_stats", None)  # the name moved
    message = (
        rf"^sacreBLEU {re.escape(sacrebleu.__version__)} has no "
        r"CHRF\._compute_score_from_stats: the paired bootstrap needs them"
    )
    with pytest.raises(TokstudyError, match=message):
        paired_bootstrap(references[:3], references[:3], references[:3], "chrf", samples=10)
