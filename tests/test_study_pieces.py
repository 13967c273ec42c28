"""A study run in pieces and pooled (tokstudy.analyses.correlation.pieces, issue 53): the
pooled tables are those of the whole study's analysis (the oracle: the workflow's
correlation run on the unsplit tables), and pieces that do not belong together are
refused with one line."""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO

from tokstudy.analyses.correlation.pieces import (
    EXTRA_OUTPUTS,
    METRIC_KEYS,
    check_piece_config,
    export_piece,
    narrowed_config,
    pool_pieces,
    pooled_tables,
)
from tokstudy.analyses.correlation.run import OUTPUT_FILES, correlation_analysis
from tokstudy.analyses.correlation.settings import CorrelationSettings
from tokstudy.errors import TokstudyError
from tokstudy.models.clm_scales import scale_agreement_by_flags

TOKENIZERS = {f"bpe_{i}": "bpe" for i in range(4)} | {f"uni_{i}": "unigram" for i in range(4)}
LANGUAGES = ("en", "fi")
SEEDS = (0, 1)
SIZES = (1000, 2000)
SETTINGS = CorrelationSettings(bootstrap_samples=20, permutations=100, primary="nu_heldout")
STUDY = {
    "seed": 42,
    "results_dir": "results/whole",
    "languages": {language: {} for language in LANGUAGES},
    "tokenizers": {name: {} for name in TOKENIZERS},
    "models": {"languages": list(LANGUAGES), "seeds": list(SEEDS), "tasks": ["clm"]},
}


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A whole study's metrics.csv and results.tsv, drawn from a seeded generator."""
    random = np.random.default_rng(3)
    metrics, results = [], []
    for language, tokenizer, size in itertools.product(LANGUAGES, TOKENIZERS, SIZES):
        nu = float(random.normal(size / 1000, 1.0))
        for split in ("train", "heldout"):
            metrics.append((language, tokenizer, size, split, "nu", nu + (split == "train")))
            metrics.append((language, tokenizer, size, split, "fertility", random.normal(2, 1)))
        for seed in SEEDS:
            score = 1.0 + 0.1 * nu + random.normal(0, 0.05)
            results.append(("clm", language, tokenizer, size, seed, 0, "bits_per_byte", score))
            results.append(("clm", language, tokenizer, size, seed, 0, "undertrained", 0.0))
    metric_columns = ["language", "tokenizer", "vocab_size", "split", "metric", "value"]
    result_columns = ["task", "language", "tokenizer", "vocab_size", "seed", "level"]
    return (
        pd.DataFrame(metrics, columns=metric_columns),
        pd.DataFrame(results, columns=[*result_columns, "metric", "value"]),
    )


def _results_folder(root: Path, metrics: pd.DataFrame, results: pd.DataFrame) -> Path:
    (root / "tables/models").mkdir(parents=True)
    metrics.to_csv(root / "tables/metrics.csv", index=False)
    results.to_csv(root / "tables/models/results.tsv", sep="\t", index=False)
    return root


def _piece_config(languages: tuple[str, ...], seeds: tuple[int, ...], name: str) -> dict:
    config = json.loads(json.dumps(STUDY))
    config["results_dir"] = f"results/{name}"
    config["languages"] = {language: {} for language in languages}
    config["models"] |= {"languages": list(languages), "seeds": list(seeds)}
    return config


def _pieces(tmp_path: Path, splits) -> list[Path]:
    """Export one piece per (languages, seeds) of ``splits`` from the whole tables."""
    metrics, results = _tables()
    pieces = []
    for languages, seeds in splits:
        name = f"{'_'.join(languages)}_seed{'_'.join(map(str, seeds))}"
        part_metrics = metrics[metrics["language"].isin(languages)]
        chosen = results["language"].isin(languages) & results["seed"].isin(seeds)
        folder = _results_folder(tmp_path / "runs" / name, part_metrics, results[chosen])
        piece = tmp_path / "pieces" / name
        export_piece(folder, _piece_config(languages, seeds, name), piece, {"describe": name})
        pieces.append(piece)
    return pieces


def _whole_run(tmp_path: Path) -> Path:
    metrics, results = _tables()
    folder = _results_folder(tmp_path / "whole", metrics, results)
    out = tmp_path / "whole_tables"
    out.mkdir()
    files = {**OUTPUT_FILES, **EXTRA_OUTPUTS}
    correlation_analysis(
        folder / "tables/metrics.csv",
        ["nu", "fertility"],
        folder / "tables/models/results.tsv",
        [],
        [],
        {},
        SETTINGS,
        {name: out / file for name, file in files.items()},
        families=TOKENIZERS,
    )
    return out


SPLITS = [(("en",), (0,)), (("en",), (1,)), (("fi",), (0, 1))]


def test_pooled_pieces_give_the_whole_study_s_tables(tmp_path: Path) -> None:
    whole = _whole_run(tmp_path)
    pooled = tmp_path / "pooled"
    pool_pieces(_pieces(tmp_path, SPLITS), STUDY, ["nu", "fertility"], SETTINGS, TOKENIZERS, pooled)
    for name in ("correlation.csv", "correlation_family.csv", "correlation_comparison.csv"):
        expected = pd.read_csv(whole / name)
        assert len(expected) > 0
        pd.testing.assert_frame_equal(pd.read_csv(pooled / name), expected)
    # the pooled inputs are kept beside the tables: every run once, the pieces' own columns
    metrics, results = _tables()
    kept_results = pd.read_csv(pooled / "results.tsv", sep="\t")
    assert list(kept_results.columns) == list(results.columns)
    assert len(kept_results) == len(results)
    kept_metrics = pd.read_csv(pooled / "metrics.csv")
    pd.testing.assert_frame_equal(
        kept_metrics.sort_values(METRIC_KEYS, ignore_index=True),
        metrics.sort_values(METRIC_KEYS, ignore_index=True),
    )
    assert not list(pooled.glob(".pool-*"))


def test_pooling_makes_its_folder_and_may_pool_into_it_again(tmp_path: Path) -> None:
    pieces = _pieces(tmp_path, SPLITS)
    out = tmp_path / "results" / "variants" / "pooled"  # no parent yet
    for _ in range(2):
        pool_pieces(pieces, STUDY, ["nu", "fertility"], SETTINGS, TOKENIZERS, out)
    assert (out / "correlation_family.csv").is_file()
    assert not list(out.glob(".pool-*")) and not list(tmp_path.glob(".pool-*"))


def test_a_run_in_two_pieces_is_refused(tmp_path: Path) -> None:
    pieces = _pieces(tmp_path, [(("en",), (0,)), (("en",), (0, 1))])
    # both holders named; 8 tokenizers x 2 sizes of seed 0 overlap
    message = (
        rf"run clm en bpe_0 1000 0 is in more than one piece \({pieces[0]}, {pieces[1]}\): "
        r"16 run\(s\) overlap"
    )
    with pytest.raises(TokstudyError, match=message):
        pooled_tables(pieces, STUDY)


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda piece: (piece / "config.yaml").unlink(), r"not a piece folder \(no config.yaml\)"),
        (
            lambda piece: (piece / "results.tsv").unlink(),
            r"results.tsv: missing; a piece folder holds metrics.csv, results.tsv$",
        ),
        (
            lambda piece: (piece / "config.yaml").write_text("- a list\n", encoding="utf-8"),
            r"config.yaml: not a mapping of config keys",
        ),
    ],
)
def test_a_broken_piece_folder_is_one_line_naming_it(tmp_path: Path, spoil, message: str) -> None:
    pieces = _pieces(tmp_path, SPLITS[:2])
    spoil(pieces[1])
    with pytest.raises(TokstudyError, match=f"^{re.escape(str(pieces[1]))}.*{message}"):
        pooled_tables(pieces, STUDY)
    with pytest.raises(TokstudyError, match=r"^no piece to pool$"):
        pooled_tables([], STUDY)


def test_a_piece_s_language_named_nan_stays_a_name(tmp_path: Path) -> None:
    # ISO 639-3 "nan" (Min Nan), "NA" or "null" are names, not missing values
    pieces = _pieces(tmp_path, SPLITS[:1])
    for name, sep in (("metrics.csv", ","), ("results.tsv", "\t")):
        table = pd.read_csv(pieces[0] / name, sep=sep)
        table["language"] = table["language"].map({"en": "nan"})
        table.to_csv(pieces[0] / name, sep=sep, index=False)
    metrics, results = pooled_tables(pieces, STUDY)
    assert set(metrics["language"]) == {"nan"} and set(results["language"]) == {"nan"}


def test_a_tokenizer_measured_differently_in_two_pieces_is_refused(tmp_path: Path) -> None:
    pieces = _pieces(tmp_path, SPLITS[:2])
    table = pieces[1] / "metrics.csv"
    metrics = pd.read_csv(table)
    metrics.loc[0, "value"] += 1e-9
    metrics.to_csv(table, index=False)
    first = pd.read_csv(pieces[0] / "metrics.csv").loc[0, "value"]
    message = rf"metric en bpe_0 1000 train nu differs between pieces \({first}, {first + 1e-9}\)"
    with pytest.raises(TokstudyError, match=message):
        pooled_tables(pieces, STUDY)


def test_a_piece_of_another_study_is_refused(tmp_path: Path) -> None:
    pieces = _pieces(tmp_path, SPLITS[:1])
    other = yaml.safe_load((pieces[0] / "config.yaml").read_text("utf-8"))
    other["seed"] = 7
    (pieces[0] / "config.yaml").write_text(yaml.safe_dump(other), encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"not a piece of this study: config key\(s\) seed"):
        pooled_tables(pieces, STUDY)


def test_the_keys_a_foreign_piece_differs_in_are_named() -> None:
    # a key only the piece has, a nested value changed, a mapping against a scalar; at most
    # five named, sorted
    piece = json.loads(json.dumps(STUDY))
    piece["analyses"] = {"correlation": {"primary": "nu_heldout"}}
    piece["models"]["tasks"] = ["mlm"]
    piece["tokenizers"] = "all"
    with pytest.raises(
        TokstudyError,
        match=r"config key\(s\) analyses, models.tasks, tokenizers differ \(a piece may narrow "
        r"only results_dir, data_root, languages, models.languages, models.seeds\)$",
    ):
        check_piece_config(Path("p"), piece, STUDY)
    many = {**STUDY, **{f"k{i}": i for i in range(7)}}
    with pytest.raises(TokstudyError, match=r"config key\(s\) k0, k1, k2, k3, k4 differ"):
        check_piece_config(Path("p"), many, STUDY)


def test_an_export_makes_its_folder_keeps_the_config_s_order_and_the_facts(
    tmp_path: Path,
) -> None:
    metrics, results = _tables()
    folder = _results_folder(tmp_path / "run", metrics, results)
    config = {"seed": 1, "languages": {"fi": {}}, "models": {"seeds": [0]}, "data_root": "/d"}
    facts = {"ran_at_commit": "abc", "cpu": "x", "describe": "é"}
    out = tmp_path / "docs" / "data" / "new_study" / "fi_seed0"  # no parent yet
    export_piece(folder, config, out, facts)
    assert list(yaml.safe_load((out / "config.yaml").read_text("utf-8"))) == list(config)
    written = (out / "piece.json").read_text("utf-8")
    assert json.loads(written) == facts and written.endswith("}\n")
    assert written.index('"cpu"') < written.index('"describe"') < written.index('"ran_at')
    assert written.count("\n") == len(facts) + 2  # one key a line
    with pytest.raises(TokstudyError, match=f"^{re.escape(str(out))}: exists; a piece is exported"):
        export_piece(folder, config, out, facts)


def test_an_unfinished_piece_is_not_exported(tmp_path: Path) -> None:
    metrics, _ = _tables()
    folder = tmp_path / "run"
    (folder / "tables").mkdir(parents=True)
    metrics.to_csv(folder / "tables/metrics.csv", index=False)
    with pytest.raises(TokstudyError, match=r"results.tsv: missing; has the piece run"):
        export_piece(folder, STUDY, tmp_path / "piece", {})
    assert not (tmp_path / "piece").exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "run"
    ]


def test_a_piece_keeps_the_causal_lm_tables_its_run_wrote(tmp_path: Path) -> None:
    # clm.tsv and clm_scales.{tsv,md} are copied byte for byte when present; their absence
    # is no error (one scale writes no clm_scales)
    metrics, results = _tables()
    folder = _results_folder(tmp_path / "run", metrics, results)
    (folder / "tables/models/clm.tsv").write_text("scale\tparameters\ntiny\t940000\n")
    export_piece(folder, STUDY, tmp_path / "piece", {})
    kept = sorted(path.name for path in (tmp_path / "piece").iterdir())
    assert kept == ["clm.tsv", "config.yaml", "metrics.csv", "piece.json", "results.tsv"]
    assert (tmp_path / "piece/clm.tsv").read_bytes() == (
        folder / "tables/models/clm.tsv"
    ).read_bytes()
    for name in ("clm_scales.tsv", "clm_scales.md"):
        (folder / "tables/models" / name).write_text(f"{name}\n")
    export_piece(folder, STUDY, tmp_path / "ladder", {})
    assert (tmp_path / "ladder/clm_scales.md").read_text() == "clm_scales.md\n"
    assert (tmp_path / "ladder/clm_scales.tsv").is_file()


def test_a_narrowed_config_is_a_piece_of_its_study(tmp_path: Path) -> None:
    piece = narrowed_config(STUDY, ["fi"], [1], "results/fi1")
    assert piece["languages"] == {"fi": {}} and piece["results_dir"] == "results/fi1"
    assert piece["models"]["languages"] == ["fi"] and piece["models"]["seeds"] == [1]
    assert piece["tokenizers"] == STUDY["tokenizers"] and STUDY["models"]["seeds"] == [0, 1]
    check_piece_config(tmp_path, piece, STUDY)  # no error: it belongs to the study
    with pytest.raises(TokstudyError, match=r"languages de: not languages of the study \(en, fi"):
        narrowed_config(STUDY, ["de"], [0], "r")
    with pytest.raises(TokstudyError, match="seeds 2: the study's seeds are 0, 1"):
        narrowed_config(STUDY, ["en"], [2], "r")
    # the data the study reads from where it was checked, written as an absolute path
    study = {**STUDY, "data_root": "../shared/corpora"}
    piece = narrowed_config(study, ["en"], [0], "r", base=Path("/work/repo"))
    assert (
        piece["data_root"] == "/work/shared/corpora" and study["data_root"] == "../shared/corpora"
    )
    assert narrowed_config(study, ["en"], [0], "r")["data_root"] == "../shared/corpora"
    # a study without models: seeds runs seed 0; without models: languages, every language
    bare = {**STUDY, "models": {"tasks": ["clm"]}}
    piece = narrowed_config(bare, ["fi"], [0], "r")
    assert piece["models"]["languages"] == ["fi"] and piece["models"]["seeds"] == [0]
    # models on some languages only: a piece keeps those of its languages, in study order
    some = {**STUDY, "models": {**STUDY["models"], "languages": ["fi"]}}
    assert narrowed_config(some, ["en", "fi"], [0], "r")["models"]["languages"] == ["fi"]
    assert narrowed_config(some, ["en"], [0], "r")["models"]["languages"] == []
    with pytest.raises(TokstudyError, match=r"seeds 1: the study's seeds are 0$"):
        narrowed_config(bare, ["fi"], [1], "r")
    with pytest.raises(TokstudyError, match=r"^the study has no models: section to run in pieces$"):
        narrowed_config({"languages": {"en": {}}}, ["en"], [0], "r")
    with pytest.raises(TokstudyError, match=r"^languages \(none\): not languages of the study"):
        narrowed_config(STUDY, [], [0], "r")
    with pytest.raises(TokstudyError, match=r"^seeds \(none\): the study's seeds are 0, 1$"):
        narrowed_config(STUDY, ["en"], [], "r")
    absolute = {**STUDY, "data_root": "/data/corpora"}
    assert (
        narrowed_config(absolute, ["en"], [0], "r", base=Path("/x"))["data_root"] == "/data/corpora"
    )


def _pool_with_the_script(pieces: list[Path], config: str, out: Path) -> Path:
    """``scripts/study_pieces.py pool`` run on kept pieces, as docs/results.md names it."""
    spec = importlib.util.spec_from_file_location("study_pieces", REPO / "scripts/study_pieces.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    arguments = ["pool", *map(str, pieces), "--configfile", str(REPO / config), "--out", str(out)]
    assert script.main(arguments) == 0
    return out


@pytest.mark.slow
@pytest.mark.shared
def test_the_kept_pieces_give_the_figures_the_results_page_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/results.md's variant-study table, recomputed from docs/data/predictive_variants
    # by the command it names (the study config's data_root is read from the repository)
    monkeypatch.chdir(REPO)
    pieces = sorted((REPO / "docs/data/predictive_variants").iterdir())
    out = _pool_with_the_script(pieces, "config/predictive_variants.yaml", tmp_path / "pooled")
    family = pd.read_csv(out / "correlation_family.csv").set_index(["score", "level", "scope"])
    row = family[family["intrinsic"] == "continued_words_heldout"].loc[
        ("clm_bits_per_byte_tiny", "within_family", "en")
    ]
    assert (row["units"], round(row["partial_spearman"], 2)) == (26, -0.20)
    assert (round(row["partial_low"], 2), round(row["partial_high"], 2)) == (-0.50, 0.14)
    assert round(row["p_within_size"], 2) == 0.25
    results_page = (REPO / "docs/results.md").read_text("utf-8")
    assert "−0.20 [−0.50, 0.14]" in results_page
    # Finnish with its two seeds
    row = family[family["intrinsic"] == "continued_words_heldout"].loc[
        ("clm_bits_per_byte_tiny", "within_family", "fi")
    ]
    assert (round(row["partial_spearman"], 2), round(row["p_within_size"], 2)) == (-0.19, 0.30)
    assert "−0.19 [−0.49, 0.18]" in results_page
    # the three languages pooled, two seeds each: the README's figure
    row = family[family["intrinsic"] == "continued_words_heldout"].loc[
        ("clm_bits_per_byte_tiny", "within_family", "pooled")
    ]
    assert (row["units"], row["n"], round(row["partial_spearman"], 2)) == (26, 228, -0.17)
    assert (round(row["partial_low"], 2), round(row["partial_high"], 2)) == (-0.39, 0.12)
    assert round(row["p_within_size"], 2) == 0.29
    assert "−0.17 [−0.39, 0.12]" in results_page
    # Marathi with its two seeds: the family whole though six BPE runs at 4000 are left out
    row = family[family["intrinsic"] == "continued_words_heldout"].loc[
        ("clm_bits_per_byte_tiny", "within_family", "mr")
    ]
    assert (row["units"], row["n"], round(row["p_within_size"], 2)) == (26, 72, 0.60)
    assert "−0.11 [−0.28, 0.18]" in results_page


@pytest.mark.slow
@pytest.mark.shared
def test_the_kept_ladder_gives_the_figures_the_results_page_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/results.md's scale ladder: the association at each scale recomputed from
    # docs/data/predictive_ladder by the command it names, and the agreement between
    # scales recomputed from the kept clm.tsv as the run computed it
    monkeypatch.chdir(REPO)
    piece = REPO / "docs/data/predictive_ladder/en_seed0"
    out = _pool_with_the_script([piece], "config/predictive_ladder.yaml", tmp_path / "pooled")
    results_page = (REPO / "docs/results.md").read_text("utf-8")
    family = pd.read_csv(out / "correlation_family.csv").set_index(["score", "level"])
    family = family[family["intrinsic"] == "continued_words_heldout"]
    across = pd.read_csv(out / "correlation.csv").set_index("score")
    across = across[across["intrinsic"] == "continued_words_heldout"]
    printed = {"tiny": ("−0.33 [−1.00, 0.33], 0.56", "−0.65 [−0.95, 0.18], 0.063"),
               "small": ("−1.00 [−1.00, −1.00], 0.0093", "−0.95 [−1.00, −0.58], 0.0003"),
               "medium": ("−0.50 [−1.00, 0.00], 0.31", "−0.38 [−0.95, 0.63], 0.31")}  # fmt: skip
    for scale, texts in printed.items():
        score = f"clm_bits_per_byte_{scale}"
        for row, text in zip((family.loc[(score, "within_family")], across.loc[score]), texts,
                             strict=True):  # fmt: skip
            assert row["units"] == 9
            estimate = [f"{row[c]:.2f}".replace("-", "−") for c in
                        ("partial_spearman", "partial_low", "partial_high")]  # fmt: skip
            assert text.startswith(f"{estimate[0]} [{estimate[1]}, {estimate[2]}], ")
            assert float(text.rsplit(", ", 1)[1]) == pytest.approx(row["p_within_size"], rel=0.05)
            assert text in results_page
    clm = pd.read_csv(piece / "clm.tsv", sep="\t", keep_default_na=False, na_values=[""])
    agreement = scale_agreement_by_flags(clm, bootstrap_resamples=500, bootstrap_seed=0)
    kept = pd.read_csv(piece / "clm_scales.tsv", sep="\t", dtype={"seeds": str})
    pd.testing.assert_frame_equal(agreement, kept, check_dtype=False, rtol=1e-6)
    taus = agreement.set_index(["smaller", "larger"])
    assert round(taus.loc[("tiny", "small"), "kendall_tau"], 2) == 0.56
    assert "| `tiny` – `small` | 0.56 [−0.15, 1.00] | 0.053 | 0.11 |" in results_page
