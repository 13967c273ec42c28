"""Parity on a multi-parallel corpus (PUD): reading, joining on sent_id, premiums, Gini,
fairness, the Study's choice of tokenizers, bad input, and the workflow end to end."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import UD_ROOT
from figures import capture_figures, visible_axes
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.colors import to_hex
from matplotlib.image import imread
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models
from workflow_support import snakemake

from tokstudy.analyses.parity import plots as parity_plots
from tokstudy.analyses.parity.parity import (
    fairness_summary,
    gini,
    parallel_parity,
    sentence_measures,
)
from tokstudy.analyses.parity.plots import plot_premiums, premium_matrix
from tokstudy.analyses.parity.tables import write_parallel_parity
from tokstudy.corpora.ud import pud_treebanks, sentence_texts
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.char import CharTokenizer
from tokstudy.tokenizers.adapters.hf_tokenizers import HFBPE
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.workflow.analyses.base import ParityTokenizer
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

# sent_id -> text; characters (= tokens of a character tokenizer) in comments
ENGLISH = {"n01": "a cat", "n02": "dog", "n03": "hi"}  # 5, 3, 2: 10
GERMAN = {"n01": "eine Katze!!", "n02": "Hund"}  # 12, 4; n03 missing
ICELANDIC = {"n03": "hæhæ", "n01": "kö", "n02": "hundurinn"}  # 4 (6 bytes), 2 (3 bytes), 9
FIXTURE = {"en": ("English", ENGLISH), "de": ("German", GERMAN), "is": ("Icelandic", ICELANDIC)}
PREMIUM = {"en": 1.0, "de": 16 / 8, "is": 15 / 10}
MEDIAN = {"en": 1.0, "de": (12 / 5 + 4 / 3) / 2, "is": 2.0}  # is: 2/5, 9/3, 4/2


def conllu_text(sentences: dict[str, str], with_ids: bool = True) -> str:
    """A CoNLL-U document, a token per whitespace word, sentences in the dict's order."""
    blocks = []
    for sent_id, text in sentences.items():
        lines = [f"# sent_id = {sent_id}"] if with_ids else []
        lines.append(f"# text = {text}")
        lines += [
            f"{i}\t{word}\t{word}\tX\t_\t_\t0\troot\t_\t_"
            for i, word in enumerate(text.split(), start=1)
        ]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def write_pud(root: Path, code: str, name: str, sentences: dict[str, str]) -> Path:
    """``root/UD_<name>-PUD/<code>_pud-ud-test.conllu.gz``."""
    folder = root / f"UD_{name}-PUD"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{code}_pud-ud-test.conllu.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(conllu_text(sentences))
    return path


@pytest.fixture
def pud_root(tmp_path: Path) -> Path:
    root = tmp_path / "ud"
    for code, (name, sentences) in FIXTURE.items():
        write_pud(root, code, name, sentences)
    return root


def char_tokenizer(tmp_path: Path, texts: list[str]) -> CharTokenizer:
    corpus = tmp_path / "chars.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return CharTokenizer.train(corpus, TrainSpec(vocab_size=None))


def all_texts() -> dict[str, dict[str, str]]:
    return {code: sentences for code, (_, sentences) in FIXTURE.items()}


# --- reading --------------------------------------------------------------------------------


def test_pud_files_are_found_by_code_and_read_by_sent_id(pud_root: Path) -> None:
    files = pud_treebanks(pud_root)
    assert sorted(files) == ["de", "en", "is"]
    assert files["is"].name == "is_pud-ud-test.conllu.gz"
    texts = sentence_texts(files["is"])
    assert texts == ICELANDIC and list(texts) == ["n03", "n01", "n02"]  # file order kept


@pytest.mark.shared
def test_real_pud_treebanks_share_their_sentence_ids() -> None:
    files = pud_treebanks(UD_ROOT)
    assert len(files) == 20 and "ja" not in files
    english, icelandic = sentence_texts(files["en"]), sentence_texts(files["is"])
    assert set(english) == set(icelandic) and len(english) == 1000
    assert list(english) != list(icelandic)  # Icelandic lists them in another order


def test_a_file_without_sent_id_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "xx_pud-ud-test.conllu"
    path.write_text(conllu_text({"n01": "a b"}, with_ids=False), encoding="utf-8")
    with pytest.raises(TokstudyError, match=rf"^{path}: sentence 1 has no '# sent_id' comment$"):
        sentence_texts(path)


def test_a_repeated_sent_id_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "xx_pud-ud-test.conllu"
    path.write_text(conllu_text({"n01": "a"}) + conllu_text({"n01": "b"}), encoding="utf-8")
    with pytest.raises(TokstudyError, match="sentence 2 repeats sent_id 'n01'"):
        sentence_texts(path)


def test_a_pud_folder_without_its_file_is_an_error(pud_root: Path) -> None:
    (pud_root / "UD_Klingon-PUD").mkdir()
    with pytest.raises(TokstudyError, match=r"UD_Klingon-PUD: expected one <code>_pud-ud-test"):
        pud_treebanks(pud_root)


# --- premiums, Gini, fairness ----------------------------------------------------------------


def test_premiums_are_joined_on_sent_id_and_hand_computed(tmp_path: Path) -> None:
    texts = all_texts()
    tokenizer = char_tokenizer(tmp_path, [t for s in texts.values() for t in s.values()])
    table = parallel_parity(texts, "en", {"char": dict.fromkeys(texts, tokenizer)})
    table = table.set_index("language")
    assert list(table.index) == ["de", "en", "is"]
    assert table["premium"].to_dict() == pytest.approx(PREMIUM)
    assert table["premium_median"].to_dict() == pytest.approx(MEDIAN)
    assert table["sentences"].to_dict() == {"de": 2, "en": 3, "is": 3}
    assert table["missing"].to_dict() == {"de": 1, "en": 0, "is": 0}
    assert table.loc["is", ["tokens", "reference_tokens"]].tolist() == [15, 10]
    assert table.loc["is", "bytes_per_token"] == pytest.approx(18 / 15)
    assert table.loc["is", "chars_per_token"] == pytest.approx(1.0)
    assert (table["roundtrip_share"] == 1.0).all() and (table["unk_rate"] == 0).all()
    assert (table["byte_fallback_rate"] == 0).all()


def test_unknown_characters_count_as_unk_and_break_the_round_trip(tmp_path: Path) -> None:
    texts = all_texts()
    tokenizer = char_tokenizer(tmp_path, [*ENGLISH.values(), *GERMAN.values()])
    table = parallel_parity(texts, "en", {"char": dict.fromkeys(texts, tokenizer)})
    icelandic = table.set_index("language").loc["is"]
    assert icelandic["unk_rate"] == pytest.approx(5 / 15)  # k ö; r; æ æ
    assert icelandic["roundtrip_share"] == 0.0
    assert icelandic["premium"] == pytest.approx(1.5)  # an [UNK] is still a token


def test_byte_fallback_tokens_are_counted() -> None:
    vocab = {"[UNK]": 0, "a": 1, "<0xC3>": 2, "<0xB6>": 3}
    tokenizer = HFTokenizer(models.BPE(vocab, [], unk_token="[UNK]", byte_fallback=True))
    tokenizer.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    measures = sentence_measures(HFBPE(tokenizer), {"s2": "a", "s1": "aöa"})
    assert list(measures.index) == ["s1", "s2"] and measures.index.name == "sent_id"
    assert measures["tokens"].tolist() == [4, 1]
    assert measures["byte_fallback"].tolist() == [2, 0]
    assert measures["roundtrip"].tolist() == [True, True]


def test_a_tokenizer_per_language_is_compared_with_the_reference_one(tmp_path: Path) -> None:
    english = char_tokenizer(tmp_path, list(ENGLISH.values()))
    german = char_tokenizer(tmp_path, list(GERMAN.values()))
    table = parallel_parity(all_texts(), "en", {"char": {"en": english, "de": german}})
    assert table["language"].tolist() == ["de", "en"]  # is: not covered
    assert table["premium"].tolist() == pytest.approx([2.0, 1.0])


def test_a_tokenizer_must_cover_the_reference(tmp_path: Path) -> None:
    german = char_tokenizer(tmp_path, list(GERMAN.values()))
    with pytest.raises(TokstudyError, match="'char' does not cover the reference 'en'"):
        parallel_parity(all_texts(), "en", {"char": {"de": german}})


def test_premium_counts_only_sentences_shared_with_a_defined_reference(tmp_path: Path) -> None:
    # characters (= tokens) in comments; the tokenizer has no "é": each is an [UNK]
    reference = {"s1": "abc", "s2": "", "s3": "a"}  # 3, 0 (empty: no ratio), 1
    target = {"s1": "abcabc", "s2": "aéé", "s4": "aaaaaaa", "s5": "a"}  # 6, 3; s4, s5 extra
    lonely = {"s2": "ab"}  # only the empty reference sentence: no premium at all
    texts = {"en": reference, "xx": target, "zz": lonely}
    tokenizer = char_tokenizer(tmp_path, ["abc"])
    table = parallel_parity(texts, "en", {"char": dict.fromkeys(texts, tokenizer)})
    rows = table.set_index("language")
    xx, en, zz = rows.loc["xx"], rows.loc["en"], rows.loc["zz"]
    # shared s1, s2; s3 missing from the target, s4 and s5 extra (left out)
    assert (xx["sentences"], xx["missing"], xx["extra"], xx["undefined"]) == (2, 1, 2, 1)
    # tokens over the shared sentences only: 6 + 3 = 9 (not 9 + 7 + 1 = 17), over 3 + 0
    assert (xx["tokens"], xx["reference_tokens"]) == (9, 3)
    assert xx["premium"] == pytest.approx(9 / 3)
    # per-sentence ratios of defined pairs only: s1 6/3 (s2's 3/0 is undefined, not inf)
    assert xx["premium_median"] == pytest.approx(2.0)
    # the target's shared sentences: 6 + 5 bytes, 6 + 3 chars, 2 [UNK] in 9 tokens;
    # s1 round-trips, s2 does not: 1 of 2
    assert xx["bytes_per_token"] == pytest.approx(11 / 9)
    assert xx["chars_per_token"] == pytest.approx(9 / 9)
    assert xx["unk_rate"] == pytest.approx(2 / 9)
    assert xx["roundtrip_share"] == pytest.approx(1 / 2)
    assert xx["byte_fallback_rate"] == 0.0
    # the reference against itself: ratios 3/3 and 1/1, s2 undefined
    assert (en["sentences"], en["missing"], en["extra"], en["undefined"]) == (3, 0, 0, 1)
    assert (en["premium"], en["premium_median"]) == (1.0, 1.0)
    # zz: 2 tokens over 0 reference tokens, no defined pair
    assert (zz["sentences"], zz["missing"], zz["undefined"], zz["tokens"]) == (1, 2, 1, 2)
    assert np.isnan(zz["premium"]) and np.isnan(zz["premium_median"])
    # the fairness summary leaves zz's NaN premium out: premiums 1 (en) and 3 (xx)
    row = fairness_summary(table).iloc[0]
    assert row["languages"] == 2
    assert (row["max_language"], row["min_language"]) == ("xx", "en")
    assert row["max_min_ratio"] == pytest.approx(3.0)
    assert row["gini"] == pytest.approx(0.25)  # |1-3| * 2 / (2 * 2^2 * 2)


def test_fairness_summary_keeps_table_order_and_skips_tokenizers_without_premiums() -> None:
    table = pd.DataFrame(
        {
            "tokenizer": ["none", "b", "b", "b", "a", "a"],
            "language": ["en", "en", "de", "is", "en", "de"],
            "premium": [np.nan, 1.0, 4.0, np.nan, 1.0, 0.5],
            "premium_median": [np.nan, np.nan, 4.0, np.nan, 1.0, 0.5],  # not a reason to drop
        }
    )
    summary = fairness_summary(table)
    assert summary["tokenizer"].tolist() == ["b", "a"]
    assert summary["languages"].tolist() == [2, 2]
    assert summary["max_language"].tolist() == ["de", "en"]
    assert summary["min_language"].tolist() == ["en", "de"]
    assert summary["max_premium"].tolist() == [4.0, 1.0]
    assert summary["min_premium"].tolist() == [1.0, 0.5]
    assert summary["max_min_ratio"].tolist() == pytest.approx([4.0, 2.0])
    # Gini of (1, 4): 3 * 2 / (2 * 4 * 2.5) = 0.3; of (1, 0.5): 0.5 * 2 / (2 * 4 * 0.75)
    assert summary["gini"].tolist() == pytest.approx([0.3, 1 / 6])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.0, 1.0, 1.0], 0.0),
        ([1.0, 3.0], 0.25),  # |1-3| * 2 / (2 * 2^2 * 2)
        ([1.0, 2.0, 1.5], 4 / 27),  # (1 + .5 + .5) * 2 / (2 * 3^2 * 1.5)
        ([0.0, 0.0, 1.0], 2 / 3),  # 4 / (2 * 9 * 1/3)
    ],
)
def test_gini_hand_computed(values: list[float], expected: float) -> None:
    assert gini(values) == pytest.approx(expected)


@pytest.mark.filterwarnings("error")
def test_gini_of_nothing_is_nan_and_of_negative_values_an_error() -> None:
    assert np.isnan(gini([])) and np.isnan(gini([0.0, 0.0]))
    with pytest.raises(TokstudyError, match=r"negative values: \[-1\.0\]$"):
        gini([0.0, 0.5, -1.0])


@given(
    st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30),
    st.floats(0.1, 10.0),
    st.randoms(),
)
def test_gini_bounds_and_invariances(values: list[float], scale: float, rng) -> None:
    value = gini(values)
    assert -1e-12 <= value <= 1 - 1 / len(values) + 1e-12
    assert gini([v * scale for v in values]) == pytest.approx(value, abs=1e-9)
    shuffled = values[:]
    rng.shuffle(shuffled)
    assert gini(shuffled) == pytest.approx(value, abs=1e-12)


def test_fairness_summary(tmp_path: Path) -> None:
    texts = all_texts()
    tokenizer = char_tokenizer(tmp_path, [t for s in texts.values() for t in s.values()])
    table = parallel_parity(texts, "en", {"char": dict.fromkeys(texts, tokenizer)})
    row = fairness_summary(table).iloc[0]
    assert (row["tokenizer"], row["languages"]) == ("char", 3)
    assert (row["max_language"], row["min_language"]) == ("de", "en")
    assert (row["max_premium"], row["min_premium"]) == pytest.approx((2.0, 1.0))
    assert row["max_min_ratio"] == pytest.approx(2.0)
    assert row["gini"] == pytest.approx(4 / 27)


def test_premium_plots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = capture_figures(monkeypatch, parity_plots)
    table = pd.DataFrame(
        {
            "tokenizer": ["b", "b", "a", "a", "a"],
            "language": ["en", "de", "en", "de", "is"],
            "premium": [1.0, 1.2, 1.0, 2.0, 0.8],
        }
    )
    matrix = premium_matrix(table)
    assert list(matrix.columns) == ["b", "a"] and list(matrix.index) == ["de", "en", "is"]
    assert np.isnan(matrix.loc["is", "b"])
    outputs = [tmp_path / f"{name}.{ext}" for name in ("heat", "bars") for ext in ("png", "pdf")]
    table.to_csv(tmp_path / "premiums.csv", index=False)
    plot_premiums(tmp_path / "premiums.csv", "en", outputs[:2], outputs[2:])
    heatmap, bars = figures
    # heat map: languages de, en, is down, tokenizers b, a across, "is" empty for b
    grid, colour_bar = heatmap.axes
    cells = grid.images[0].get_array()
    assert cells.mask.tolist() == [[False, False], [False, False], [True, False]]
    assert cells.filled(0).tolist() == [[1.2, 2.0], [1.0, 1.0], [0.0, 0.8]]
    assert [t.get_text() for t in grid.texts] == ["1.20", "2.00", "1.00", "1.00", "0.80"]
    assert [t.get_text() for t in grid.get_xticklabels()] == ["b", "a"]
    assert [t.get_text() for t in grid.get_yticklabels()] == ["de", "en", "is"]
    assert colour_bar.get_ylabel() == "tokens / tokens of en"
    # bars: a panel per tokenizer, highest premium first; red above 1, grey the reference
    panels = visible_axes(bars)
    assert [axis.get_title() for axis in panels] == ["b", "a"]
    heights = [[bar.get_height() for bar in axis.patches] for axis in panels]
    assert heights == [[1.2, 1.0], [2.0, 1.0, 0.8]]
    colours = [[to_hex(bar.get_facecolor()) for bar in axis.patches] for axis in panels]
    red, grey, blue = (to_hex(name) for name in ("tab:red", "grey", "tab:blue"))
    assert colours == [[red, grey], [red, grey, blue]]
    assert imread(outputs[0]).shape[:2] == (round((3.5 + 0.4 * 3) * 120), round((3 + 1.5) * 120))
    assert all(path.read_bytes().startswith(b"%PDF") for path in outputs[1::2])


# --- the Study's choice and its checks ----------------------------------------------------------


def _plan(tmp_path: Path, parity: dict, **changes: object) -> StudyPlan:
    config = {
        "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
        "tokenizers": {"char": {}, "sp_bpe": {"vocab_sizes": [100]}},
        "metrics": ["mu"],
        "results_dir": "out",
        "analyses": {
            "parity": parity,
            "multilingual": {"tokenizers": ["sp_unigram"], "vocab_sizes": [300]},
        },
        **changes,
    }
    return StudyPlan(Study(config, tmp_path))


def test_parity_tokenizers_cover_what_the_study_trains(tmp_path: Path, pud_root: Path) -> None:
    plan = _plan(tmp_path, {"pud_root": str(pud_root), "reference": "en"})
    assert list(plan.analyses["parity"].files()) == ["de", "en", "is"]
    assert plan.analyses["parity"].tokenizers_scored() == [
        ParityTokenizer("char", "trained", "out/tokenizers/de/char/full", ("de",)),
        ParityTokenizer("sp_bpe 100", "trained", "out/tokenizers/de/sp_bpe/100", ("de",)),
        ParityTokenizer("char", "trained", "out/tokenizers/en/char/full", ("en",)),
        ParityTokenizer("sp_bpe 100", "trained", "out/tokenizers/en/sp_bpe/100", ("en",)),
        ParityTokenizer(
            "sp_unigram 300 (de+en)",
            "multilingual",
            "out/multilingual/tokenizers/sp_unigram/300",
            ("de", "en"),
        ),
    ]
    assert plan.analyses["parity"].pairs() == []  # no line-aligned target
    chosen = _plan(tmp_path, {"pud_root": "ud", "reference": "en", "languages": ["de"]})
    assert list(chosen.analyses["parity"].files()) == ["de", "en"]  # relative to the base folder


@pytest.mark.parametrize(
    ("parity", "message"),
    [
        (
            {"reference": "en", "languages": ["de", "xx"]},
            r"analyses\.parity\.languages: language 'xx' is not in the parallel corpus under "
            r".*ud \(has: de, en, is\)",
        ),
        ({"reference": "fr"}, r"analyses\.parity\.reference: language 'fr' is not in the"),
        ({"reference": "en", "languages": ["is"]}, r"no tokenizer of the study covers 'en' and"),
        ({"reference": "en", "pud_root": "nowhere"}, r"analyses\.parity\.pud_root: no folder"),
        ({"reference": "en", "target": "de", "languages": ["de"], "pud_root": None}, "needs pud"),
    ],
)
def test_bad_parity_config_gives_one_line(
    tmp_path: Path, pud_root: Path, parity: dict, message: str
) -> None:
    parity = {"pud_root": str(pud_root), **parity}
    parity = {key: value for key, value in parity.items() if value is not None}
    with pytest.raises(TokstudyError, match=message):
        _plan(tmp_path, parity, analyses={"parity": parity})


# --- the workflow step --------------------------------------------------------------------------


def test_write_parallel_parity_records_what_it_leaves_out(
    tmp_path: Path, pud_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directories = {}
    for code in ("en", "de"):
        corpus = tmp_path / f"{code}.txt"
        corpus.write_text("\n".join(FIXTURE[code][1].values()) + "\n", encoding="utf-8")
        directories[code] = tmp_path / "tok" / code
        train_to_directory("char", corpus, TrainSpec(None, label=code), directories[code])
    entries = [
        {"label": "char", "kind": "trained", "directory": str(directories[c]), "languages": [c]}
        for c in ("de", "en")
    ]
    entries.append(
        {
            "label": "alone",
            "kind": "trained",
            "directory": str(directories["en"]),
            "languages": ["en"],
        }
    )
    outputs = {
        "csv": tmp_path / "p.csv",
        "markdown": tmp_path / "p.md",
        "fairness_csv": tmp_path / "f.csv",
        "fairness_markdown": tmp_path / "f.md",
        "json": tmp_path / "p.json",
    }
    with caplog.at_level(logging.INFO):
        write_parallel_parity(pud_treebanks(pud_root), "en", entries, outputs)
    table = pd.read_csv(outputs["csv"])
    assert table[["tokenizer", "kind", "language"]].values.tolist() == [
        ["char", "trained", "de"],
        ["char", "trained", "en"],
    ]
    assert table["premium"].tolist() == pytest.approx([2.0, 1.0])
    assert pd.read_csv(outputs["fairness_csv"])["gini"].tolist() == pytest.approx([1 / 6])
    record = json.loads(outputs["json"].read_text())
    assert record["missing_sentences"] == {"de": ["n03"]}
    assert record["skipped_languages"] == {"is": "no tokenizer of the study covers it"}
    assert list(record["skipped_tokenizers"]) == ["alone"]
    assert "is: no tokenizer of the study covers it; left out" in caplog.text
    assert "de: 1 reference sentences missing, left out" in caplog.text
    assert "| char" in outputs["markdown"].read_text()


def test_write_parallel_parity_fails_on_a_file_without_ids_and_writes_nothing(
    tmp_path: Path, pud_root: Path
) -> None:
    files = pud_treebanks(pud_root)
    files["de"].write_bytes(gzip.compress(conllu_text(GERMAN, with_ids=False).encode()))
    outputs = {key: tmp_path / key for key in ("csv", "markdown", "fairness_csv", "json")}
    entries = [{"label": "x", "kind": "trained", "directory": "none", "languages": ["en", "de"]}]
    with pytest.raises(TokstudyError, match=rf"^{files['de']}: sentence 1 has no '# sent_id'"):
        write_parallel_parity(files, "en", entries, outputs)
    assert not any(path.exists() for path in outputs.values())


# --- end to end --------------------------------------------------------------------------------


@pytest.mark.slow
def test_pud_parity_in_the_workflow(tmp_path: Path, pud_root: Path) -> None:
    config = {
        "seed": 3,
        "corpus_defaults": {"heldout": 0.1, "max_lines": 600},
        "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
        "tokenizers": {"char": {}, "sp_bpe": {"vocab_sizes": [200]}},
        "metrics": ["mu"],
        "analyses": {
            "parity": {"pud_root": str(pud_root), "reference": "en"},
            "multilingual": {"tokenizers": ["sp_unigram"], "vocab_sizes": [300]},
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", "analysis_outputs", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    tables = tmp_path / "results/tables/analysis"
    table = pd.read_csv(tables / "parity_pud.csv")
    labels = ["char", "sp_bpe 200", "sp_unigram 300 (de+en)"]
    assert list(dict.fromkeys(table["tokenizer"])) == labels
    assert set(table["language"]) == {"de", "en"}
    assert (table[table["language"] == "en"]["premium"] == 1.0).all()
    char = table[(table["tokenizer"] == "char") & (table["language"] == "de")].iloc[0]
    assert char["premium"] == pytest.approx(2.0)  # one token per character on both sides
    fairness = pd.read_csv(tables / "parity_pud_fairness.csv")
    assert fairness["tokenizer"].tolist() == labels and fairness["gini"].between(0, 1).all()
    log = (tmp_path / "results/logs/tokenization_parity_pud.log").read_text()
    assert "is: no tokenizer of the study covers it; left out" in log
    plots = tmp_path / "results/plots/analysis"
    assert (plots / "parity_pud_heatmap.png").stat().st_size > 1000
    assert (plots / "parity_pud_bars.pdf").stat().st_size > 1000
