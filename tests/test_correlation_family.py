"""The family analyses of the correlation (issues 37 and 53): a metric told apart from a
tokenizer family, tokenizers the units. Oracles: planted designs, within-family ranks by
hand, permutation floors counted by hand, family means by hand, and the registry's
families."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tokstudy.analyses.correlation.cells import check_cells, study_cells
from tokstudy.analyses.correlation.run import correlate
from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.analyses.correlation.table import correlation_table, mixed_table, scopes
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.registry import ADAPTERS, family_of

SETTINGS = CorrelationSettings(bootstrap_samples=200, permutations=20000, seed=3)
SIZES = (1000, 2000, 4000)


def _design(metric, score, families=4, members=3, seeds=(0, 1), languages=("xx",)):
    """``families`` × ``members`` tokenizers × 3 sizes; ``metric``/``score`` map
    (family index, member index, size, rng) to a value."""
    rng = np.random.default_rng(7)
    rows = []
    for language in languages:
        for f in range(families):
            for m in range(members):
                for size in SIZES:
                    value = metric(f, m, size, rng)
                    for seed in seeds:
                        rows.append(
                            {
                                "language": language,
                                "tokenizer": f"t{f}{m}",
                                "family": f"family{f}",
                                "vocab_size": size,
                                "seed": seed,
                                "metric": value,
                                "score": score(f, m, size, rng),
                            }
                        )
    return check_cells(pd.DataFrame(rows).astype(str), ["score"], "test cells")


def test_a_metric_that_only_tells_families_apart_is_found_across_not_within() -> None:
    # the family's level moves both metric and score; within a family the metric is noise
    quality = [0.0, 1.0, 2.0, 3.0]
    cells = _design(
        lambda f, m, s, r: quality[f] + r.normal(0, 0.1),
        lambda f, m, s, r: quality[f] + r.normal(0, 0.1),
    )
    plain = correlation_table(cells, ["score"], SETTINGS).set_index("intrinsic")
    within = correlation_table(cells, ["score"], SETTINGS, "within_family").set_index("intrinsic")
    across = correlation_table(cells, ["score"], SETTINGS, "across_family").set_index("intrinsic")
    assert plain.loc["metric", "p_within_size"] < 0.001  # tokenizers: the family effect shows
    assert within.loc["metric", "p_within_size"] > 0.05  # nothing inside a family
    assert abs(within.loc["metric", "partial_spearman"]) < 0.4
    assert across.loc["metric", "partial_spearman"] == pytest.approx(1.0)
    assert across.loc["metric", "n"] == 12  # 4 families × 3 sizes
    # the families are the units: 4! = 24 relabellings, floor 2/24 > 0.05, so no p
    assert across.loc["metric", "units"] == 4
    assert across.loc["metric", "min_attainable_p"] == pytest.approx(2 / 24)
    assert np.isnan(across.loc["metric", "p_within_size"])


def test_a_metric_that_works_inside_families_is_found_within() -> None:
    # every family's level differs and is unrelated to the metric; inside a family the
    # better-compressing member scores better
    offset = [3.0, -1.0, 0.5, 2.0]
    cells = _design(
        lambda f, m, s, r: m + r.normal(0, 0.05),
        lambda f, m, s, r: offset[f] + m + r.normal(0, 0.05),
    )
    within = correlation_table(cells, ["score"], SETTINGS, "within_family").set_index("intrinsic")
    assert within.loc["metric", "partial_spearman"] == pytest.approx(1.0)
    # tokenizers relabelled within their family: 3!⁴ = 1296 orderings, all enumerated;
    # only the data's own reaches ρ = 1, so p is the floor 2/1296
    assert within.loc["metric", "p_method"] == "exact"
    assert within.loc["metric", "p_within_size"] == pytest.approx(2 / 1296)
    assert within.loc["metric", "level"] == "within_family"


def test_the_within_family_rho_ranks_tokenizers_within_size_and_family_by_hand() -> None:
    cells = _design(
        lambda f, m, s, r: r.normal() + 0.1 * f,
        lambda f, m, s, r: r.normal() + 0.3 * m,
        seeds=(0,),
    )
    within = correlation_table(cells, ["score"], SETTINGS, "within_family")
    strata = cells["vocab_size"].astype(str) + cells["family"]

    def centered(values: pd.Series) -> np.ndarray:
        ranks = values.groupby(strata).rank()
        return (ranks - ranks.groupby(strata).transform("mean")).to_numpy()

    a, b = centered(cells["metric"].astype(float)), centered(cells["score"].astype(float))
    expected = a @ b / np.sqrt((a @ a) * (b @ b))
    assert within["partial_spearman"].iloc[0] == pytest.approx(expected)


def test_family_blocks_set_the_permutation_floor() -> None:
    # families of 3 and 4 tokenizers, one size: within families 3!·4! = 144 relabellings
    # (floor 2/144); across tokenizers 7! = 5040 (2/5040); two families: 2 cells, too few
    rows = [
        {"language": "xx", "tokenizer": t, "family": t[0], "vocab_size": 1000, "seed": 0,
         "metric": value, "score": value + 0.5 * (t[0] == "b")}
        for value, t in enumerate(("a1", "a2", "a3", "b1", "b2", "b3", "b4"))
    ]  # fmt: skip
    cells = check_cells(pd.DataFrame(rows).astype(str), ["score"], "test cells")
    within = correlation_table(cells, ["score"], SETTINGS, "within_family")
    plain = correlation_table(cells, ["score"], SETTINGS)
    across = correlation_table(cells, ["score"], SETTINGS, "across_family")
    assert within["min_attainable_p"].iloc[0] == pytest.approx(2 / 144)
    assert plain["min_attainable_p"].iloc[0] == pytest.approx(2 / 5040)
    assert across["note"].iloc[0] == "2 cells < 4: not computed"


def test_small_families_of_a_study_are_left_out_within_and_noted() -> None:
    rows = [
        {"language": "xx", "tokenizer": t, "family": t[0], "vocab_size": 1000, "seed": 0,
         "metric": value, "score": value}
        for value, t in enumerate(("a1", "a2", "a3", "b1", "b2", "c1"))
    ]  # fmt: skip
    frame = pd.DataFrame(rows).astype(str)
    with pytest.raises(TokstudyError) as error:  # a user's table: refused
        check_cells(frame, ["score"], "cells.csv")
    assert str(error.value) == (
        "cells.csv: column 'family': family 'b' has 2 tokenizers (b1, b2); a family compared "
        "within needs at least 3 (give them their own families, or one with more)"
    )
    cells = check_cells(frame, ["score"], "cells.csv", study_table=True)
    (row,) = correlation_table(cells, ["score"], SETTINGS, "within_family").itertuples()
    assert row.n == 3 and row.units == 3  # family a alone
    assert "families of fewer than 3 tokenizers left out: b (2), c (1)" in row.note


def test_across_family_cells_are_the_family_means_per_seed() -> None:
    rows = []
    for tokenizer, family, metric, scores in (
        ("a1", "a", 1.0, (10.0, 12.0)),
        ("a2", "a", 3.0, (20.0, 22.0)),
        ("b1", "b", 5.0, (30.0, 34.0)),
    ):
        for seed, score in enumerate(scores):
            rows.append(
                {"language": "xx", "tokenizer": tokenizer, "family": family,
                 "vocab_size": 1000, "seed": seed, "metric": metric, "score": score}
            )  # fmt: skip
    cells = check_cells(pd.DataFrame(rows).astype(str), ["score"], "test cells", study_table=True)
    ((scope, notes),) = scopes(cells, "score", "across_family")
    assert list(scope.cells["tokenizer"]) == ["a", "b"] and notes == []
    assert list(scope.cells["metric"]) == [2.0, 5.0]
    assert [list(r) for r in scope.replicates] == [[15.0, 17.0], [30.0, 34.0]]


def test_the_mixed_model_recovers_a_planted_slope_beside_family_levels() -> None:
    level = [4.0, -2.0, 1.0, 0.0]
    cells = _design(
        lambda f, m, s, r: r.normal(),
        lambda f, m, s, r: r.normal(),  # replaced below
        members=4,
        seeds=(0,),
    )
    metric = cells["metric"].to_numpy(float)
    family = cells["family"].str[-1].astype(int).to_numpy()
    noise = np.random.default_rng(1).normal(0, 0.3, len(cells))
    cells["score"] = np.array(level)[family] + 0.8 * metric + noise
    mixed = mixed_table(cells, ["score"], SETTINGS)
    (row,) = mixed.itertuples()
    assert (row.scope, row.random_effect, row.groups, row.n) == ("xx", "tokenizer + family", 16, 48)
    assert row.low > 0 and row.p < 0.001  # the slope shows once the levels are allowed for


def test_family_column_errors_are_one_line() -> None:
    frame = pd.DataFrame(
        {"language": ["xx"] * 4, "tokenizer": ["a", "a", "b", "c"], "vocab_size": [1, 2, 1, 1],
         "seed": [0] * 4, "family": ["f", "g", "f", "h"], "m": [1, 2, 3, 4],
         "score": [1, 3, 2, 4]}
    ).astype(str)  # fmt: skip
    with pytest.raises(TokstudyError) as error:
        check_cells(frame, ["score"], "cells.csv")
    assert str(error.value) == "cells.csv: column 'family': tokenizer 'a' has several (f, g)"
    frame.loc[1, "family"] = ""
    with pytest.raises(TokstudyError, match=r"^cells.csv: column 'family', row 3 is empty$"):
        check_cells(frame, ["score"], "cells.csv")


def test_without_a_family_column_the_family_table_is_empty() -> None:
    cells = _design(lambda f, m, s, r: r.normal(), lambda f, m, s, r: r.normal())
    result = correlate(cells.drop(columns="family"), ["score"], SETTINGS)
    assert result.family.empty and set(result.mixed["random_effect"]) == {"tokenizer"}
    with_family = correlate(cells, ["score"], SETTINGS)
    assert set(with_family.family["level"]) == {"within_family", "across_family"}


def test_every_registered_tokenizer_has_a_family() -> None:
    assert all(entry.family for entry in ADAPTERS.values())
    assert family_of("sp_bpe") == family_of("bpe_knockout") == "bpe"
    assert family_of("gpt_4o") == "gpt_4o"  # not in the registry: its own family


def test_study_cells_take_the_registry_family(tmp_path) -> None:
    metrics = pd.DataFrame(
        [
            {"language": "en", "tokenizer": t, "vocab_size": size, "metric": "mu",
             "split": "heldout", "value": value}
            for t, size, value in (("sp_bpe", "1000", 1.0), ("bbpe", "1000", 2.0),
                                   ("sp_bpe", "2000", 1.5), ("bbpe", "2000", 2.5))
        ]
    )  # fmt: skip
    metrics.to_csv(tmp_path / "metrics.csv", index=False)
    results = pd.DataFrame(
        [
            {"language": "en", "tokenizer": t, "vocab_size": size, "seed": 0, "task": "clm",
             "metric": "bits_per_byte", "level": 0, "value": value}
            for t, size, value in (("sp_bpe", "1000", 1.1), ("bbpe", "1000", 1.3),
                                   ("sp_bpe", "2000", 1.0), ("bbpe", "2000", 1.2))
        ]
    )  # fmt: skip
    results.to_csv(tmp_path / "results.tsv", sep="\t", index=False)
    cells, _ = study_cells(tmp_path / "metrics.csv", ["mu"], tmp_path / "results.tsv", [], [], {})
    assert dict(zip(cells["tokenizer"], cells["family"], strict=True)) == {
        "sp_bpe": "bpe",
        "bbpe": "byte_level_bpe",
    }
