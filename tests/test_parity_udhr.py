"""Parity on the UDHR: the HTML reader, codes and scripts, premiums and fairness by hand,
who takes part, bad input, the plots, and the workflow end to end on three translations."""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import SHARED
from hypothesis import given
from hypothesis import strategies as st
from workflow_support import snakemake

from tokstudy.analyses.udhr.parity import (
    flores_comparison,
    most_expensive,
    udhr_fairness,
    udhr_premiums,
    udhr_scripts,
)
from tokstudy.analyses.udhr.plots import plot_udhr_premiums
from tokstudy.analyses.udhr.tables import read_udhr_table, write_udhr_parity
from tokstudy.corpora.udhr import (
    EVERY_TRANSLATION,
    dominant_script,
    parse_articles,
    read_articles,
    read_index,
    select_codes,
    translation_file,
    translations_of,
    udhr_coverage,
)
from tokstudy.errors import TokstudyError
from tokstudy.report.page.segments import udhr_article_one
from tokstudy.tokenizers.adapters.char import CharTokenizer
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.workflow.analyses.base import ParityTokenizer
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

UDHR_ROOT = SHARED / "udhr"

# a translation by hand: a preamble, article 2 missing, a list, entities, article 4 empty,
# an article 31 (left out: only 1-30 count), whitespace spread over lines
HAND_MADE = """<!doctype html>
<html data-code="fra" data-iso6393="fra" dir="ltr" lang="fr">
  <head><title>Français</title></head>
  <body>
    <h1>Déclaration universelle des droits de l'homme</h1>
    <header><h2>Préambule</h2><p>Considérant que la reconnaissance…</p></header>
    <article data-number="3">
      <h2>Article 3</h2>
      <p>Intro &amp; suite :</p>
      <ul>
        <li>premi&egrave;re libert&eacute;</li>
        <li>
          <p>seconde
             libert&#233;</p>
        </li>
      </ul>
    </article>
    <article data-number="1">
      <h2>Article <b>1</b></h2>
      <p>Tous les êtres humains naissent <em>libres</em> et égaux.</p>
      <p>Ils sont doués de raison&nbsp;!</p>
    </article>
    <article data-number="4"><h2>Article 4</h2><p>  </p></article>
    <article data-number="31"><h2>Article 31</h2><p>Pas un article.</p></article>
  </body>
</html>
"""
HAND_MADE_ARTICLES = {
    1: "Tous les êtres humains naissent libres et égaux.\nIls sont doués de raison\u00a0!",
    3: "Intro & suite :\npremière liberté\nseconde liberté",
}

INDEX_ROWS = [
    # code, bcp47, iso6393, name, direction, stage, latitude, longitude
    ("eng", "en", "eng", "English", "ltr", "4", "51.5", "-0.1"),
    ("deu_1996", "de-1996", "deu", "German (1996)", "ltr", "4", "50.0", "10.0"),
    ("deu_1901", "de-1901", "deu", "German (1901)", "ltr", "4", "50.0", "10.0"),
    ("arb", "ar", "arb", "Arabic", "rtl", "4", "25.0", "45.0"),
    ("cmn_hans", "zh", "cmn", "Chinese (simplified)", "ltr", "4", "35.0", "110.0"),
    ("empty", "xe", "xem", "Empty", "ltr", "1", "0", "0"),
]
# article texts; characters (= tokens of a character tokenizer) in comments
TEXTS = {
    "eng": {1: "ab", 2: "abcd", 3: "x"},  # 2 + 4 + 1 = 7
    "deu_1996": {1: "abab", 3: "xyz"},  # article 2 missing: 4 + 3 over 2 + 1
    "deu_1901": {1: "a", 2: "ab", 3: "x"},  # 1 + 2 + 1 over 7
    "arb": {1: "ابت", 2: "ا", 3: "ب ت"},  # 3 + 1 + 3 over 7; ratios 1.5, .25, 3
    "cmn_hans": {1: "人人", 2: "生而", 3: "自由"},  # 2 + 2 + 2 over 7; ratios 1, .5, 2
}
PREMIUM = {"eng": 1.0, "deu_1996": 7 / 3, "deu_1901": 4 / 7, "arb": 1.0, "cmn_hans": 6 / 7}
MEDIAN = {"eng": 1.0, "deu_1996": 2.5, "deu_1901": 0.5, "arb": 1.5, "cmn_hans": 1.0}


def article_html(code: str, articles: dict[int, str]) -> str:
    body = "".join(
        f'<article data-number="{n}"><h2>Article {n}</h2><p>{html.escape(text)}</p></article>'
        for n, text in articles.items()
    )
    return f'<html data-code="{code}"><body><header><p>Preamble</p></header>{body}</body></html>'


@pytest.fixture
def udhr_root(tmp_path: Path) -> Path:
    root = tmp_path / "udhr"
    (root / "declaration").mkdir(parents=True)
    header = "code\tbcp47\tiso6393\tname\tdirection\tstage\tlatitude\tlongitude\tohchr\n"
    rows = "".join("\t".join(row) + "\t\n" for row in INDEX_ROWS)
    (root / "index.tsv").write_text(header + rows, encoding="utf-8")
    for code, articles in {**TEXTS, "empty": {}}.items():
        (root / "declaration" / f"{code}.html").write_text(
            article_html(code, articles) if articles else '<article data-number="1"></article>',
            encoding="utf-8",
        )
    return root


def char_tokenizer(tmp_path: Path) -> CharTokenizer:
    corpus = tmp_path / "chars.txt"
    corpus.write_text("\n".join(t for a in TEXTS.values() for t in a.values()), encoding="utf-8")
    return CharTokenizer.train(corpus, TrainSpec(vocab_size=None))


# --- the reader --------------------------------------------------------------------------------


def test_the_reader_on_a_hand_made_file(tmp_path: Path) -> None:
    path = tmp_path / "fra.html"
    path.write_text(HAND_MADE, encoding="utf-8")
    assert read_articles(path) == HAND_MADE_ARTICLES


@given(
    st.dictionaries(
        st.integers(1, 30),
        st.lists(
            st.text(st.characters(blacklist_categories=["Cc", "Cs", "Zl", "Zp"]), min_size=1),
            min_size=1,
            max_size=3,
        ),
        max_size=5,
    )
)
def test_escaped_paragraphs_read_back(articles: dict[int, list[str]]) -> None:
    """Any text, escaped into <p> elements, reads back with its ASCII whitespace collapsed."""
    parts = [
        f'<article data-number="{n}"><h2>{n}</h2>'
        + "".join(f"<p>{html.escape(line)}</p>" for line in lines)
        + "</article>"
        for n, lines in articles.items()
    ]
    expected = {}
    for n, lines in sorted(articles.items()):
        kept = [re.sub(r"[ \t\n\r\f]+", " ", line).strip() for line in lines]
        if any(kept):
            expected[n] = "\n".join(line for line in kept if line)
    read = parse_articles(
        '<article data-number="31"><p>x</p></article>' + "".join(parts), Path("x")
    )
    assert read == expected


def test_a_file_without_articles_is_not_a_udhr_translation(tmp_path: Path) -> None:
    path = tmp_path / "x.html"
    path.write_text("<html><body><p>Hello</p></body></html>", encoding="utf-8")
    with pytest.raises(TokstudyError, match=rf"^{path}: not a UDHR translation \(no <article"):
        read_articles(path)


@pytest.mark.parametrize(
    ("markup", "message"),
    [
        ('<article data-number="1"></article><article data-number="1"></article>', "twice"),
        ('<article data-number="one"></article>', "data-number 'one' is not a number"),
    ],
)
def test_bad_article_numbers(tmp_path: Path, markup: str, message: str) -> None:
    path = tmp_path / "x.html"
    path.write_text(markup, encoding="utf-8")
    with pytest.raises(TokstudyError, match=message):
        read_articles(path)


@pytest.mark.shared
def test_the_real_udhr_files() -> None:
    index = read_index(UDHR_ROOT)
    articles = {code: read_articles(translation_file(UDHR_ROOT, code)) for code in index.index}
    complete = [code for code, found in articles.items() if sorted(found) == list(range(1, 31))]
    assert len(index) == 532 and len(complete) == 521  # the facts of ../shared/udhr/README.md
    assert index.loc[complete, "iso6393"].nunique() == 440
    assert sorted(articles["taj"]) == [1]
    assert articles["eng"][1].startswith("All human beings are born free and equal in dignity")
    assert len(articles["eng"][13].splitlines()) == 2  # <ol><li><p> items, one line each


# --- codes and scripts --------------------------------------------------------------------------


def test_index_codes_and_translations_of_study_languages(udhr_root: Path) -> None:
    index = read_index(udhr_root)
    assert list(index.index) == sorted(row[0] for row in INDEX_ROWS)
    assert translations_of(index, "de") == ["deu_1901", "deu_1996"]  # the BCP 47 subtag
    assert translations_of(index, "deu") == ["deu_1901", "deu_1996"]  # the ISO 639-3 code
    assert translations_of(index, "zh") == ["cmn_hans"] and translations_of(index, "xx") == []
    assert select_codes(index, ["deu", "arb"], "eng", "k") == ["arb", "deu_1901", "deu_1996", "eng"]
    assert select_codes(index, None, "eng", "k") == sorted(index.index)


@pytest.mark.parametrize(
    ("languages", "reference", "message"),
    [
        (
            ["deu_1969"],
            "eng",
            r"^k\.languages: 'deu_1969' is not a UDHR translation or ISO "
            r"639-3 code \(closest: deu_1996, deu_1901, deu\)$",
        ),
        (["zzzz"], "eng", r"'zzzz' .* \(no close code\)$"),
        (None, "engl", r"^k\.reference: 'engl' is not a UDHR .* \(closest: eng\)$"),
    ],
)
def test_unknown_codes_name_the_closest(
    udhr_root: Path, languages: list[str] | None, reference: str, message: str
) -> None:
    with pytest.raises(TokstudyError, match=message):
        select_codes(read_index(udhr_root), languages, reference, "k")


def test_a_folder_without_index_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match=rf"^{tmp_path}: no index\.tsv \(not a UDHR folder\)$"):
        read_index(tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, мир мир!", ("Cyrl", 6 / 11)),  # 5 Latin letters, 6 Cyrillic
        ("日本語のテキスト", ("Kana", 4 / 8)),  # 3 Han, 1 Hiragana, 4 Katakana
        ("ab вг 12", ("Cyrl", 0.5)),  # a tie goes to the first code
        ("नमस्ते", ("Deva", 1.0)),  # the virama and vowel sign are marks, not letters
        ("مرحبا Ahmed مرحبا", ("Arab", 10 / 15)),
        ("123 !?", ("Zyyy", 0.0)),
    ],
)
def test_dominant_script_of_mixed_text(text: str, expected: tuple[str, float]) -> None:
    script, share = dominant_script(text)
    assert (script, share) == (expected[0], pytest.approx(expected[1]))


# --- premiums, fairness, scripts by hand -----------------------------------------------------


def test_premiums_by_hand(tmp_path: Path) -> None:
    tokenizer = char_tokenizer(tmp_path)
    table = udhr_premiums(TEXTS, "eng", {"char": dict.fromkeys(TEXTS, tokenizer)})
    table = table.set_index("language")
    assert list(table.index) == sorted(TEXTS)
    assert table["premium"].to_dict() == pytest.approx(PREMIUM)
    assert table["premium_median"].to_dict() == pytest.approx(MEDIAN)
    assert table["articles"].to_dict() == {c: 2 if c == "deu_1996" else 3 for c in TEXTS}
    assert table["missing"].to_dict() == {c: int(c == "deu_1996") for c in TEXTS}
    assert table.loc["arb", "bytes_per_token"] == pytest.approx(
        13 / 7
    )  # 6 letters of 2 bytes, a space
    assert table.loc["arb", "chars_per_token"] == 1.0
    assert (table["roundtrip"] == 1.0).all() and (table["unk_rate"] == 0).all()


def _table(rows: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["tokenizer", "language", "iso6393", "script", "premium"])


def test_fairness_averages_varieties_by_hand() -> None:
    table = _table(
        [
            ("t", "eng", "eng", "Latn", 1.0),
            ("t", "a1", "aaa", "Latn", 2.0),
            ("t", "a2", "aaa", "Cyrl", 4.0),  # aaa: (2 + 4) / 2 = 3
            ("t", "b", "bbb", "Arab", 5.0),
            ("u", "eng", "eng", "Latn", 1.0),
            ("u", "b", "bbb", "Arab", 1.0),
        ]
    )
    fairness = udhr_fairness(table).set_index("tokenizer")
    t = fairness.loc["t"]
    assert t["languages"] == 3 and t["median_premium"] == 3.0  # of 1, 3, 5
    assert t["p90_premium"] == pytest.approx(4.6)  # 3 + 0.8 * (5 - 3)
    assert (t["max_premium"], t["max_language"]) == (5.0, "bbb")
    # Gini: ordered pairs' |differences| 2 * (2 + 4 + 2) = 16, over 9 pairs, / (2 * mean 3)
    assert t["gini"] == pytest.approx(16 / 9 / 6)
    assert t["share_above_2x"] == pytest.approx(2 / 3) and t["share_above_4x"] == pytest.approx(
        1 / 3
    )
    assert fairness.loc["u", "gini"] == 0.0 and fairness.loc["u", "languages"] == 2
    top = most_expensive(table, 2)
    assert top[top["tokenizer"] == "t"][["iso6393", "premium"]].values.tolist() == [
        ["bbb", 5.0],
        ["aaa", 3.0],
    ]


def test_scripts_table_by_hand() -> None:
    table = _table(
        [
            ("t", "eng", "eng", "Latn", 1.0),
            ("t", "a1", "aaa", "Latn", 2.0),
            ("t", "a2", "aaa", "Latn", 4.0),  # aaa in Latin: 3
            ("t", "c", "ccc", "Latn", 6.0),
            ("t", "b", "bbb", "Arab", 5.0),
            ("u", "eng", "eng", "Latn", 1.0),
        ]
    )
    scripts = udhr_scripts(table)
    assert scripts.columns.tolist() == ["script", "script_name", "languages", "t", "u"]
    assert scripts["script"].tolist() == ["Latn", "Arab"]
    assert scripts["script_name"].tolist() == ["Latin", "Arabic"]
    assert scripts["languages"].tolist() == [3, 1]
    assert scripts["t"].tolist() == [3.0, 5.0]  # median of 1, 3, 6; bbb alone
    assert scripts["u"].iloc[0] == 1.0 and np.isnan(scripts["u"].iloc[1])


def test_flores_comparison_by_hand() -> None:
    """Their premium is a language's FLORES token count over English's; a code FLORES has in
    two scripts is matched script by script; Japanese (Jpan) matches our Hiragana."""
    lengths = pd.DataFrame(
        {
            "Language": ["English", "Standard Arabic", "Arabic (Latin)", "Japanese", "Klingon"],
            "cl100k_base": [100, 300, 250, 200, 900],
            "other": [1, 1, 1, 1, 1],
        }
    )
    language_map = pd.DataFrame(
        {
            "Language": ["English", "Standard Arabic", "Arabic (Latin)", "Japanese", "Klingon"],
            "FLORES-200 code": ["eng_Latn", "arb_Arab", "arb_Latn", "jpn_Jpan", "tlh_Latn"],
        }
    )
    ours = _table(
        [
            ("t", "eng", "eng", "Latn", 1.0),
            ("t", "arb", "arb", "Arab", 2.7),
            ("t", "arb_latn", "arb", "Latn", 9.0),  # another script: its own row
            ("t", "jpn", "jpn", "Hira", 1.0),
            ("t", "jpn_osaka", "jpn", "Hira", 3.0),  # varieties averaged: 2.0
            ("t", "xyz", "xyz", "Latn", 5.0),  # not in FLORES
        ]
    )
    table = flores_comparison(ours, lengths, language_map, "cl100k_base")
    assert table["iso6393"].tolist() == ["arb", "arb", "eng", "jpn"]
    assert table["flores"].tolist() == ["arb_Arab", "arb_Latn", "eng_Latn", "jpn_Jpan"]
    assert table["premium_flores"].tolist() == pytest.approx([3.0, 2.5, 1.0, 2.0])
    assert table["premium_udhr"].tolist() == pytest.approx([2.7, 9.0, 1.0, 2.0])
    assert table["udhr_over_flores"].tolist() == pytest.approx([0.9, 3.6, 1.0, 1.0])


# --- who takes part ------------------------------------------------------------------------------


def test_coverage_of_trained_multilingual_and_pretrained_tokenizers(
    udhr_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = read_index(udhr_root)
    codes = sorted(TEXTS)
    entries = [
        {"label": "bpe", "kind": "trained", "directory": "t/en", "languages": ["en"]},
        {"label": "bpe", "kind": "trained", "directory": "t/de", "languages": ["de"]},
        {"label": "bpe", "kind": "trained", "directory": "t/jak", "languages": ["jak"]},
        {"label": "alone", "kind": "trained", "directory": "a/ar", "languages": ["ar"]},
        {"label": "multi", "kind": "multilingual", "directory": "m", "languages": ["en", "zh"]},
        {"label": "gpt", "kind": "pretrained", "directory": "g", "languages": EVERY_TRANSLATION},
    ]
    record: dict = {"skipped_tokenizers": {}}
    with caplog.at_level(logging.INFO):
        coverage = udhr_coverage(entries, index, codes, "eng", record)
    assert {label: sorted(group) for label, group in coverage.items()} == {
        "bpe": ["deu_1901", "deu_1996", "eng"],
        "multi": ["cmn_hans", "eng"],
        "gpt": codes,
    }
    assert coverage["bpe"]["deu_1996"] == Path("t/de") and coverage["bpe"]["eng"] == Path("t/en")
    assert record["skipped_tokenizers"] == {
        "bpe": ["jak: no UDHR translation of this language among those compared"],
        "alone": ["covers arb: needs the reference eng and another translation"],
    }
    assert "alone: covers arb: needs the reference eng and another translation; left out" in (
        caplog.text
    )
    with pytest.raises(TokstudyError, match="no tokenizer covers eng and another translation"):
        udhr_coverage(entries[3:4], index, codes, "eng", {"skipped_tokenizers": {}})


# --- the workflow step ---------------------------------------------------------------------------

OUTPUT_NAMES = (
    "csv",
    "markdown",
    "fairness_csv",
    "fairness_markdown",
    "scripts_csv",
    "scripts_markdown",
    "json",
)


def _char_entries(tmp_path: Path) -> list[dict]:
    corpus = tmp_path / "all.txt"
    corpus.write_text("\n".join(t for a in TEXTS.values() for t in a.values()), encoding="utf-8")
    directory = tmp_path / "tok" / "char"
    train_to_directory("char", corpus, TrainSpec(None, label="all"), directory)
    return [
        {"label": "char", "kind": "pretrained", "directory": str(directory), "languages": ["*"]}
    ]


def test_write_udhr_parity(
    tmp_path: Path, udhr_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = {code: translation_file(udhr_root, code) for code in [*TEXTS, "empty"]}
    outputs = {name: tmp_path / f"out.{name}" for name in OUTPUT_NAMES}
    with caplog.at_level(logging.INFO):
        write_udhr_parity(udhr_root / "index.tsv", files, "eng", _char_entries(tmp_path), outputs)
    table = read_udhr_table(outputs["csv"])
    required = "tokenizer language iso6393 script direction articles premium premium_median "
    required += "bytes_per_token chars_per_token byte_fallback_rate unk_rate roundtrip"
    assert set(required.split()) <= set(table.columns)
    table = table.set_index("language")
    assert table["premium"].to_dict() == pytest.approx(PREMIUM)
    assert table.loc["arb", ["iso6393", "script", "direction"]].tolist() == ["arb", "Arab", "rtl"]
    assert table.loc["cmn_hans", "script"] == "Hani" and table.loc["eng", "script"] == "Latn"
    fairness = read_udhr_table(outputs["fairness_csv"]).iloc[0]
    assert fairness["languages"] == 4  # deu_1901 and deu_1996 averaged: (7/3 + 4/7) / 2
    assert fairness["max_language"] == "deu" and fairness["max_premium"] == pytest.approx(
        (7 / 3 + 4 / 7) / 2
    )
    assert "varieties and orthographies" in outputs["fairness_markdown"].read_text()
    scripts = read_udhr_table(outputs["scripts_csv"]).set_index("script")
    assert scripts.loc["Latn", "languages"] == 2 and scripts.loc["Arab", "char"] == 1.0
    record = json.loads(outputs["json"].read_text())
    assert record["empty_translations"] == {"empty": str(files["empty"])}
    assert record["missing_articles"] == {"deu_1996": [2]}
    assert "empty: no article text in" in caplog.text
    assert "deu_1996: 1 reference articles missing, compared on the rest" in caplog.text


def test_the_reference_must_be_among_the_translations(tmp_path: Path, udhr_root: Path) -> None:
    files = {code: translation_file(udhr_root, code) for code in ("arb", "deu_1996")}
    with pytest.raises(TokstudyError, match="the reference eng is not among the translations"):
        write_udhr_parity(udhr_root / "index.tsv", files, "eng", [], {})


def test_a_bad_translation_fails_in_one_line_and_writes_nothing(
    tmp_path: Path, udhr_root: Path
) -> None:
    files = {code: translation_file(udhr_root, code) for code in TEXTS}
    files["arb"].write_text("<html><p>not the declaration</p></html>", encoding="utf-8")
    outputs = {name: tmp_path / f"out.{name}" for name in OUTPUT_NAMES}
    with pytest.raises(TokstudyError, match=rf"^{files['arb']}: not a UDHR translation"):
        write_udhr_parity(udhr_root / "index.tsv", files, "eng", _char_entries(tmp_path), outputs)
    assert not any(path.exists() for path in outputs.values())


def test_udhr_plots(tmp_path: Path, udhr_root: Path) -> None:
    files = {code: translation_file(udhr_root, code) for code in TEXTS}
    outputs = {name: tmp_path / f"out.{name}" for name in OUTPUT_NAMES}
    write_udhr_parity(udhr_root / "index.tsv", files, "eng", _char_entries(tmp_path), outputs)
    plots = {
        name: [tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"]
        for name in ("map", "curves", "scripts")
    }
    plot_udhr_premiums(outputs["csv"], outputs["scripts_csv"], "eng", plots)
    assert all(path.stat().st_size > 1000 for paths in plots.values() for path in paths)


# --- the Study's plan and its checks -------------------------------------------------------------


def _study(tmp_path: Path, udhr: dict, **changes: object) -> StudyPlan:
    (tmp_path / "gpt.json").write_text("{}", encoding="utf-8")  # a pretrained source, never read
    config = {
        "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "results_dir": "out",
        "pretrained": {"gpt": {"path": "gpt.json"}},
        "analyses": {"parity": {"udhr": udhr}},
        **changes,
    }
    return StudyPlan(Study(config, tmp_path))


def test_the_plan_of_the_udhr_parity(tmp_path: Path, udhr_root: Path) -> None:
    analyses = _study(tmp_path, {"root": str(udhr_root), "languages": ["deu"]}).analyses
    assert analyses["udhr"].reference() == "eng"  # the default
    assert list(analyses["udhr"].files()) == ["deu_1901", "deu_1996", "eng"]
    assert analyses["udhr"].tokenizers_scored() == [
        ParityTokenizer("char", "trained", "out/tokenizers/de/char/full", ("de",)),
        ParityTokenizer("char", "trained", "out/tokenizers/en/char/full", ("en",)),
        ParityTokenizer("gpt", "pretrained", "out/pretrained/gpt", EVERY_TRANSLATION),
    ]
    assert analyses["udhr"].tokenizer_dirs() == [
        "out/pretrained/gpt",
        "out/tokenizers/de/char/full",
        "out/tokenizers/en/char/full",
    ]
    targets = analyses.targets()
    assert "out/tables/analysis/parity_udhr_fairness.md" in targets
    assert "out/plots/analysis/parity_udhr_map.pdf" in targets
    assert _study(tmp_path, {"root": "udhr"}).analyses["udhr"].root() == udhr_root


def test_the_study_page_shows_article_1_of_each_language(tmp_path: Path, udhr_root: Path) -> None:
    # de has two translations compared (deu_1901 sorts first), en has eng; the study
    # languages are en and de (``_study``)
    plan = _study(tmp_path, {"root": str(udhr_root), "languages": ["deu"]})
    files = plan.page.udhr_article_one()
    assert files == {
        "de": str(udhr_root / "declaration" / "deu_1901.html"),
        "en": str(udhr_root / "declaration" / "eng.html"),
    }
    assert udhr_article_one(files) == {"de": {"udhr": "a"}, "en": {"udhr": "ab"}}
    # without a UDHR parity the page has no UDHR line
    assert _study(tmp_path, {}, analyses={}).page.udhr_article_one() == {}


@pytest.mark.parametrize(
    ("udhr", "message"),
    [
        ({"languages": ["deu", "fra"]}, r"analyses\.parity\.udhr\.languages: 'fra' is not a UDHR"),
        ({"reference": "en"}, r"analyses\.parity\.udhr\.reference: 'en' is not .*closest: eng"),
        ({"root": "nowhere"}, r"analyses\.parity\.udhr\.root: no folder .*nowhere$"),
        ({"reference": "empty", "languages": ["arb"]}, "no tokenizer covers empty and another"),
    ],
)
def test_bad_udhr_config_gives_one_line(
    tmp_path: Path, udhr_root: Path, udhr: dict, message: str
) -> None:
    with pytest.raises(TokstudyError, match=message):
        _study(tmp_path, {"root": str(udhr_root), **udhr}, pretrained={})


def test_a_udhr_root_without_index_stops_the_study(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    with pytest.raises(TokstudyError, match=r"bare: no index\.tsv \(not a UDHR folder\)"):
        _study(tmp_path, {"root": str(tmp_path / "bare")})


# --- end to end ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.shared
def test_udhr_parity_in_the_workflow(tmp_path: Path) -> None:
    config = {
        "seed": 3,
        "corpus_defaults": {"heldout": 0.1, "max_lines": 300},
        "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "pretrained": {"llama_2": {"path": str(SHARED / "pretrained/llama-2/tokenizer.json")}},
        "analyses": {
            "parity": {"udhr": {"root": str(UDHR_ROOT), "languages": ["deu_1996", "cmn_hans"]}}
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", "analysis_outputs", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    tables = tmp_path / "results/tables/analysis"
    table = read_udhr_table(tables / "parity_udhr.csv")
    pairs = sorted(zip(table["tokenizer"], table["language"], strict=True))
    assert pairs == [
        ("char", "deu_1996"),
        ("char", "eng"),
        ("llama_2", "cmn_hans"),
        ("llama_2", "deu_1996"),
        ("llama_2", "eng"),
    ]
    assert (table[table["language"] == "eng"]["premium"] == 1.0).all()
    assert table.set_index("language").loc["cmn_hans", "script"] == "Hani"
    fairness = read_udhr_table(tables / "parity_udhr_fairness.csv")
    assert fairness["tokenizer"].tolist() == ["char", "llama_2"]
    assert fairness["languages"].tolist() == [2, 3]
    plots = tmp_path / "results/plots/analysis"
    assert all(
        (plots / f"parity_udhr_{name}.png").stat().st_size > 1000
        for name in ("map", "curves", "scripts")
    )
