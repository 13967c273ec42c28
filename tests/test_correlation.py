"""The correlation analysis: hand-computed statistics, joins, bad input, a tiny workflow run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from test_models_workflow import TINY_TRAINING
from workflow_support import snakemake

from tokstudy.analysis.correlation import (
    CorrelationSettings,
    correlate,
    correlation_table,
    intrinsic_cells,
    join_cells,
    model_scores,
    nmt_scores,
    ranking,
    size_label,
    write_correlations,
)
from tokstudy.errors import TokstudyError
from tokstudy.study import Study, StudyPlan

FAST = CorrelationSettings(bootstrap_samples=200, permutations=500, seed=1)


def test_perfect_monotone_four_cells_has_exact_permutation_p() -> None:
    result = correlate([1, 2, 3, 4], [2, 4, 6, 8], FAST)
    assert result["n"] == 4
    assert result["spearman"] == pytest.approx(1) and result["pearson"] == pytest.approx(1)
    # 4! = 24 pairings enumerated: identity and reversal reach |ρ| = 1
    assert result["spearman_p"] == pytest.approx(2 / 24)
    assert result["spearman_low"] == pytest.approx(1) and result["spearman_high"] == pytest.approx(
        1
    )
    assert "constant bootstrap resamples left out" in result["note"]


def test_ties_get_average_ranks() -> None:
    # ranks of x: 1, 2.5, 2.5, 4 → ρ = 4.5 / sqrt(4.5 · 5) = 3 / sqrt(10); r is the same here
    result = correlate([1, 2, 2, 3], [1, 2, 3, 4], FAST)
    assert result["spearman"] == pytest.approx(3 / math.sqrt(10))
    assert result["pearson"] == pytest.approx(3 / math.sqrt(10))
    assert result["spearman_low"] <= result["spearman"] <= result["spearman_high"]


def test_negative_correlation_and_pearson_differs_from_spearman() -> None:
    # monotone but not linear: ρ = −1, r from the formula
    x, y = np.array([1.0, 2, 3, 10]), np.array([8.0, 4, 2, 1])
    result = correlate(x, y, FAST)
    assert result["spearman"] == pytest.approx(-1)
    dx, dy = x - x.mean(), y - y.mean()
    assert result["pearson"] == pytest.approx((dx @ dy) / math.sqrt((dx @ dx) * (dy @ dy)))
    assert result["pearson"] > -1


def test_fewer_than_four_cells_give_nan_and_a_note() -> None:
    result = correlate([1, 2, 3], [3, 1, 2], FAST)
    assert result["n"] == 3 and math.isnan(result["spearman"]) and math.isnan(result["pearson_p"])
    assert result["note"] == "3 cells < 4: not computed"


@pytest.mark.parametrize(
    ("x", "y", "which"),
    [([2, 2, 2, 2, 2], [1, 2, 3, 4, 5], "intrinsic"), ([1, 2, 3, 4, 5], [7] * 5, "downstream")],
)
def test_constant_column_gives_nan_and_a_note(x: list, y: list, which: str) -> None:
    result = correlate(x, y, FAST)
    assert math.isnan(result["spearman"]) and math.isnan(result["pearson"])
    assert result["note"] == f"{which} constant over the cells: undefined"


def test_same_seed_same_intervals_and_other_seed_other_intervals() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=12), rng.normal(size=12)
    first, again = correlate(x, y, FAST, seed=3), correlate(x, y, FAST, seed=3)
    assert first == again
    other = correlate(x, y, FAST, seed=4)
    assert other["spearman"] == first["spearman"]
    assert (other["spearman_low"], other["spearman_high"]) != (
        first["spearman_low"],
        first["spearman_high"],
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.floats(-100, 100, allow_nan=False)),
        min_size=4,
        max_size=12,
    )
)
def test_statistics_agree_with_scipy(pairs: list[tuple[int, float]]) -> None:
    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs])
    result = correlate(x, y, CorrelationSettings(bootstrap_samples=20, permutations=20))
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert math.isnan(result["spearman"])
        return
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-9)
    assert result["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-9)
    assert 0 < result["spearman_p"] <= 1


def _metrics(language: str, values: dict[tuple[str, int], float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (language, tokenizer, size, split, "nu", value)
            for (tokenizer, size), value in values.items()
            for split in ("train", "heldout")
        ],
        columns=["language", "tokenizer", "vocab_size", "split", "metric", "value"],
    )


CELLS = [("sp_bpe", 100), ("sp_bpe", 200), ("hft", 100), ("hft", 200), ("bbpe", 600)]


def _model_results(language: str, scores: dict, seeds: tuple[int, ...] = (0, 1)) -> pd.DataFrame:
    rows = []
    for (tokenizer, size), value in scores.items():
        for seed in seeds:
            rows.append(("pos", language, tokenizer, size, seed, 0, "accuracy", value + seed))
            rows.append(("mlm", language, tokenizer, size, seed, 0, "bits_per_char", 1.0))
            rows.append(("mlm", language, tokenizer, size, seed, 0, "pseudo_perplexity", 9.0))
    return pd.DataFrame(
        rows,
        columns=["task", "language", "tokenizer", "vocab_size", "seed", "level", "metric", "value"],
    )


def test_scores_are_seed_means_and_join_leaves_out_cells_without_a_score(caplog) -> None:
    values = {cell: float(i) for i, cell in enumerate(CELLS)}
    results = _model_results("mr", values)
    # one seed of one cell has no bits per character: that cell is a one-seed mean
    lost = (results.tokenizer == "hft") & (results.vocab_size == 100) & (results.seed == 1)
    results.loc[lost & (results.metric == "bits_per_char"), "value"] = np.nan
    # one cell lost its POS score in both seeds, one cell has no intrinsic metrics
    results.loc[(results.tokenizer == "bbpe") & (results.task == "pos"), "value"] = np.nan
    extra = _model_results("mr", {("characterbert", 20000): 0.5})
    scores = model_scores(pd.concat([results, extra]))
    pos = scores[scores.downstream == "pos accuracy"].set_index(["tokenizer", "vocab_size"])
    assert pos.loc[("hft", "200"), "value"] == pytest.approx(3.5)  # seeds 3 and 4
    assert ("bbpe", "600") not in pos.index and (pos["seeds"] == 2).all()
    assert "mlm pseudo_perplexity" not in set(scores.downstream)

    joined, notes = join_cells(intrinsic_cells(_metrics("mr", values), ["nu"]), scores)
    assert "1 cell(s) without intrinsic metrics left out: mr characterbert 20000" in notes
    assert "pos accuracy (mr): 1 cell(s) without a score left out" in notes
    assert (
        "mlm bits_per_char (mr): 1 cell(s) averaged over fewer seeds (missing or NaN runs)" in notes
    )
    assert any("without a score" in r.message for r in caplog.records)
    pos_cells = joined[(joined.downstream == "pos accuracy") & (joined.split == "heldout")]
    assert len(pos_cells) == 4 and "characterbert" not in set(joined.tokenizer)


def test_noise_levels_are_separate_scores() -> None:
    results = _model_results("mr", {CELLS[0]: 1.0})
    noised = results.assign(level=20, value=results["value"] - 0.5)
    labels = set(model_scores(pd.concat([results, noised])).downstream)
    assert {"pos accuracy", "pos accuracy (noise 20%)", "mlm bits_per_char (noise 20%)"} <= labels


def test_pooled_rows_only_across_scopes_and_ranking_by_absolute_rho() -> None:
    nu = {cell: float(i) for i, cell in enumerate(CELLS)}
    metrics = pd.concat([_metrics("en", nu), _metrics("mr", nu)])
    # en: accuracy falls with ν (ρ = −1); mr: a shuffled order
    results = pd.concat(
        [
            _model_results("en", {cell: -v for cell, v in nu.items()}),
            _model_results("mr", dict(zip(CELLS, [3.0, 1, 4, 0, 2], strict=True))),
        ]
    )
    joined, _ = join_cells(intrinsic_cells(metrics, ["nu"]), model_scores(results))
    table = correlation_table(joined, FAST)
    pos = table[(table.downstream == "pos accuracy") & (table.split == "train")].set_index("scope")
    assert list(pos.index) == ["en", "mr", "pooled"]
    assert pos.loc["pooled", "pooled"] and not pos.loc["en", "pooled"]
    assert pos.loc["en", "spearman"] == pytest.approx(-1)
    assert pos.loc["mr", "spearman"] == pytest.approx(stats.spearmanr(range(5), [3, 1, 4, 0, 2])[0])
    assert pos.loc["pooled", "n"] == 10
    bpc = table[table.downstream == "mlm bits_per_char"]
    assert bpc["spearman"].isna().all()
    assert (bpc["note"] == "downstream constant over the cells: undefined").all()
    ranked = ranking(table)
    en = ranked[(ranked.downstream == "pos accuracy") & (ranked.scope == "en")]
    assert list(en["rank"]) == [1, 2] and list(en["spearman"]) == pytest.approx([-1, -1])
    assert "mlm bits_per_char" not in set(ranked.downstream)


def test_two_cells_write_nan_tables_with_notes_and_an_empty_ranking(tmp_path: Path) -> None:
    two = dict(list({cell: float(i) for i, cell in enumerate(CELLS)}.items())[:2])
    joined, notes = join_cells(
        intrinsic_cells(_metrics("de", two), ["nu"]), model_scores(_model_results("de", two))
    )
    outputs = {
        name: tmp_path / f"{name}.{ext}"
        for name, ext in (
            ("csv", "csv"),
            ("markdown", "md"),
            ("ranking_csv", "csv"),
            ("ranking_markdown", "md"),
        )
    }
    table = write_correlations(joined, notes, FAST, outputs)
    assert table["spearman"].isna().all() and (table["note"] == "2 cells < 4: not computed").all()
    assert pd.read_csv(outputs["ranking_csv"]).empty
    assert "No correlation could be computed" in outputs["ranking_markdown"].read_text("utf-8")
    markdown = outputs["markdown"].read_text("utf-8")
    assert "## pos accuracy" in markdown and "2 cells < 4: not computed" in markdown
    assert correlation_table(joined.iloc[:0], FAST).empty


def test_nmt_scores_use_the_chosen_tokenizer_side_and_unsized_tokenizers_join() -> None:
    runs = pd.DataFrame(
        [
            {
                "direction": d,
                "tokenizer": t,
                "vocab_size": s,
                "seed": seed,
                "bleu": b,
                "chrf": 2 * b,
            }
            for d in ("en-mr", "mr-en")
            for t, s in (("sp_bpe", "300"), ("char", "full"))
            for seed, b in ((1, 1.0), (2, 3.0))
        ]
    )
    scores = nmt_scores(runs, {"en-mr": "mr", "mr-en": "en"})
    assert set(zip(scores.scope, scores.language, strict=True)) == {
        ("en-mr", "mr"),
        ("mr-en", "en"),
    }
    assert (scores[scores.score_metric == "chrf"]["value"] == 4.0).all()
    assert size_label("char", 57) == "full" and size_label("sp_bpe", "300") == "300"
    with pytest.raises(TokstudyError, match="no tokenizer side for direction"):
        nmt_scores(runs, {"en-mr": "mr"})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bootstrap_samples": 0}, "analyses.correlation.bootstrap_samples must be >= 1"),
        ({"confidence": 1.0}, "analyses.correlation.confidence must be in"),
        ({"nmt_side": "both"}, "analyses.correlation.nmt_side must be one of target, source"),
        ({"plot_split": "dev"}, "analyses.correlation.plot_split must be one of train, heldout"),
    ],
)
def test_bad_settings_are_one_line_errors(changes: dict, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        CorrelationSettings(**changes)


def test_missing_intrinsic_metric_is_an_error() -> None:
    with pytest.raises(TokstudyError, match="intrinsic metrics: no rows for f95"):
        intrinsic_cells(_metrics("mr", {CELLS[0]: 1.0}), ["nu", "f95"])


def _study(**sections: object) -> dict:
    return {
        "languages": {"en": {"chatterbot": "english"}},
        "tokenizers": {"sp_bpe": {"vocab_sizes": [300]}},
        "metrics": ["mu"],
        **sections,
    }


def test_correlation_is_on_with_a_downstream_stage_and_can_be_turned_off() -> None:
    assert StudyPlan(Study(_study())).analyses.correlation() is None
    assert StudyPlan(Study(_study(nmt={}))).analyses.correlation() == {}
    tuned = {"analyses": {"correlation": {"permutations": 99}}, "nmt": {}}
    assert StudyPlan(Study(_study(**tuned))).analyses.correlation() == {"permutations": 99}
    turned_off = StudyPlan(Study(_study(nmt={}, analyses={"correlation": False})))
    assert turned_off.analyses.correlation() is None
    with pytest.raises(TokstudyError, match=r"analyses\.correlation: the study has no downstream"):
        StudyPlan(Study(_study(analyses={"correlation": {"seed": 1}})))


def correlation_study(workdir: Path) -> Path:
    """A tiny study with both downstream stages: 2 tokenizers × 2 sizes, a few steps."""
    tokenizers = ["hf_wordpiece", "sp_unigram"]
    config = {
        "seed": 3,
        "languages": {"de": {"chatterbot": "german"}},
        "vocab_sizes": [250, 300],
        "tokenizers": {name: {} for name in tokenizers},
        "metrics": ["mu", "nu"],
        "models": {
            "languages": ["de"],
            "tokenizers": tokenizers,
            "vocab_sizes": [250, 300],
            "seeds": [0],
            "tasks": ["mlm"],
            **{k: v for k, v in TINY_TRAINING.items() if k != "finetune"},
        },
        "nmt": {
            "languages": ["en", "mr"],
            "directions": ["en-mr"],
            "corpus": {"builtin": "cldr"},
            "tokenizers": tokenizers,
            "vocab_sizes": [250, 300],
            "seeds": [1],
            "split": {"dev_size": 20, "test_size": 20},
            "train": {"max_steps": 4, "eval_every": 4, "warmup_steps": 2, "max_tokens": 512},
            "decode": {"beam_size": 1},
            "evaluation": {"baseline": "sp_unigram", "bootstrap_samples": 10},
        },
        "analyses": {"correlation": {"bootstrap_samples": 50, "permutations": 50}},
        "resources": {"nmt_train": {"threads": 1}, "pretrain_mlm": {"threads": 1}},
    }
    path = workdir / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.slow
def test_tiny_study_writes_the_correlation_tables_and_plot(tmp_path: Path) -> None:
    result = snakemake(
        tmp_path, "--cores", "2", "correlation_outputs", config=correlation_study(tmp_path)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    table = pd.read_csv(results / "tables/analysis/correlation.csv")
    # mlm scores exist for de only, NMT scores for en-mr only: no pooled rows
    assert set(table.scope) == {"de", "en-mr"} and not table.pooled.any()
    assert set(table.downstream) == {
        "nmt bleu",
        "nmt chrf",
        "mlm bits_per_char",
        "mlm pll_per_word",
    }
    assert set(table.intrinsic) == {"mu", "nu"} and set(table.split) == {"train", "heldout"}
    assert (table["n"] == 4).all()  # 2 tokenizers × 2 sizes per scope
    computed = table["spearman"].between(-1, 1)
    assert (computed | table["note"].str.contains("constant")).all()
    ranked = pd.read_csv(results / "tables/analysis/correlation_ranking.csv")
    assert ranked.groupby(["downstream", "scope"])["rank"].min().eq(1).all()
    markdown = (results / "tables/analysis/correlation.md").read_text("utf-8")
    assert "pooled correlation can come from the difference between languages" in markdown
    assert (results / "plots/analysis/correlation.png").stat().st_size > 5000
    nmt_metrics = pd.read_csv(results / "nmt/metrics/mr/sp_unigram/300.tsv", sep="\t")
    assert set(nmt_metrics["split"]) == {"train", "heldout"}
    assert "correlation_analysis: finished" in (results / "logs/correlation.log").read_text("utf-8")
