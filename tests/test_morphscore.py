"""MorphScore-style alignment (tokstudy.analyses.morphscore): items built from a hand-made
treebank of five words, MorphScore's exclusion rule, morpheme-boundary precision/recall,
a treebank without lemmas, the planner's checks and a dry run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import UD_ROOT
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers
from workflow_support import snakemake

from tokstudy.analyses.morphscore.items import (
    build_items,
    morphscore_items,
    mseg_boundaries,
    score,
    stem_item,
)
from tokstudy.analyses.morphscore.tables import write_morphscore
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.pretrained import PretrainedHF, import_pretrained
from tokstudy.workflow.analyses.morphscore.plan import language_treebanks
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study

#: form, lemma, UPOS, MISC: boundaries by hand in the comments
WORDS = [
    ("dogs", "dog", "NOUN", "MSeg=dog-s"),  # item: dog|s (3); morphemes {3}
    ("walked", "walk", "VERB", "MSeg=walk-ed"),  # item: walk|ed (4); morphemes {4}
    ("went", "go", "VERB", "_"),  # lemma not a prefix: no item
    ("cat", "cat", "NOUN", "_"),  # form = lemma: no item
    ("Houses", "house", "NOUN", "MSeg=House-s"),  # item (case-blind): House|s (5); {5}
]
#: WordPiece: dog|##s (cut 3: hit), wal|##ked (cut 3, not 4: miss), Houses whole (excluded)
VOCAB = ["[UNK]", "dog", "##s", "wal", "##ked", "Houses", "went", "cat"]


def write_treebank(root: Path, name: str, code: str, words: list, lemmas: bool = True) -> Path:
    folder = root / f"UD_{name}"
    folder.mkdir(parents=True)
    lines = ["# sent_id = s1", f"# text = {' '.join(w[0] for w in words)}"]
    for i, (form, lemma, upos, misc) in enumerate(words, start=1):
        lines.append(f"{i}\t{form}\t{lemma if lemmas else '_'}\t{upos}\t_\t_\t0\troot\t_\t{misc}")
    path = folder / f"{code}_{name.split('-')[1].lower()}-ud-test.conllu.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n\n")
    return folder


def wordpiece_json() -> HFTokenizer:
    tokenizer = HFTokenizer(
        models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def wordpiece() -> PretrainedHF:
    return PretrainedHF(wordpiece_json())


def test_items_of_five_words_are_those_computed_by_hand(tmp_path: Path) -> None:
    folder = write_treebank(tmp_path, "English-Toy", "en", WORDS)
    items = build_items(sorted(folder.glob("*.gz")))
    assert items.stems == {("dogs", "dog"): 3, ("walked", "walk"): 4, ("Houses", "house"): 5}
    assert items.morphemes == {"dogs": (3,), "walked": (4,), "Houses": (5,)}
    assert items.skipped == {"not_prefix": 1, "form equals lemma": 1}


def test_morphscore_excludes_whole_words_and_strips_wordpiece_markers(tmp_path: Path) -> None:
    folder = write_treebank(tmp_path, "English-Toy", "en", WORDS)
    result = score(build_items(sorted(folder.glob("*.gz"))), wordpiece())
    assert result["items"] == 3
    assert (result["scored"], result["excluded_single_token"]) == (2, 1)
    assert result["excluded_unmappable"] == 0
    assert result["morphscore"] == pytest.approx(1 / 2)  # dog|s hit, wal|ked miss
    # token cuts {3} in dogs and in walked; morpheme cuts {3}, {4}, {5}: 1 of 2, 1 of 3
    assert result["boundary_precision"] == pytest.approx(1 / 2)
    assert result["boundary_recall"] == pytest.approx(1 / 3)


def test_morphscore_data_files_give_the_same_items_and_score(tmp_path: Path) -> None:
    # MorphScore's own layout (an unnamed index column, then full_word, pt1, rest)
    data = tmp_path / "toy_morph_data.csv"
    data.write_text(
        ",full_word,pt1,rest\n0,dogs,dog,s\n1,walked,walk,ed\n2,Houses,House,s\n"
        "3,dogs,dog,s\n4,cats,ca,s\n",
        encoding="utf-8",
    )
    items = morphscore_items(data)
    assert items.stems == {("dogs", "dog"): 3, ("walked", "walk"): 4, ("Houses", "House"): 5}
    assert items.skipped == {"duplicate row": 1, "parts do not join to the word": 1}
    result = score(items, wordpiece())
    assert (result["items"], result["scored"], result["morphscore"]) == (3, 2, 0.5)
    (tmp_path / "other.csv").write_text("word,stem\ndogs,dog\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"other.csv: no column full_word, pt1, rest"):
        morphscore_items(tmp_path / "other.csv")


def test_stem_items_and_morpheme_segments() -> None:
    assert stem_item("Kinder", "Kind") == 4
    assert stem_item("gingen", "gehen") is None
    assert stem_item("geh", "gehen") is None
    assert mseg_boundaries("보좌관은", "보좌관-은") == (3,)
    assert mseg_boundaries("dogs", "dog-es") is None  # does not join to the form
    assert mseg_boundaries("dogs", None) is None


def test_a_treebank_without_lemmas_is_listed_and_skipped(tmp_path: Path) -> None:
    english = write_treebank(tmp_path, "English-Toy", "en", WORDS)
    lemmaless = write_treebank(tmp_path, "German-Toy", "de", WORDS, lemmas=False)
    source = tmp_path / "tokenizer.json"
    wordpiece_json().save(str(source))
    import_pretrained("wp", {}, source, tmp_path / "imported")
    outputs = [tmp_path / f"m.{ext}" for ext in ("csv", "md", "json")]
    table = write_morphscore(
        {"de": [lemmaless], "en": [english]},
        [
            {
                "label": "wp",
                "kind": "pretrained",
                "directory": str(tmp_path / "imported"),
                "languages": ["de", "en"],
            }
        ],
        *outputs,
        {"am": ["ar", "en"]},
    )
    assert json.loads(outputs[2].read_text())["no_treebank"] == {"am": ["ar", "en"]}
    assert table[["tokenizer", "language", "scored"]].values.tolist() == [["wp", "en", 2]]
    notes = json.loads(outputs[2].read_text())["languages"]
    assert notes["de"]["skipped"] == "no lemmas in the treebank"
    assert "skipped" not in notes["en"] and notes["en"]["items"] == 3
    assert pd.read_csv(outputs[0])["morphscore"].tolist() == [0.5]


def _plan(tmp_path: Path, morphscore: dict, german: bool = False) -> StudyPlan:
    languages = {"en": {"chatterbot": "english"}}
    if german:
        languages["de"] = {"chatterbot": "german"}
    config = {
        "languages": languages,
        "tokenizers": {"char": {}},
        "metrics": ["mu"],
        "results_dir": "out",
        "analyses": {"morphscore": morphscore},
    }
    return StudyPlan(Study(config, tmp_path))


def test_planner_finds_treebanks_by_code_and_names_the_closest_codes(tmp_path: Path) -> None:
    write_treebank(tmp_path / "ud", "English-Toy", "en", WORDS)
    write_treebank(tmp_path / "ud", "Estonian-Toy", "et", WORDS)
    assert sorted(language_treebanks(tmp_path / "ud")) == ["en", "et"]
    plan = _plan(tmp_path, {"ud_root": "ud"}).analyses["morphscore"]
    assert list(plan.treebanks()) == ["en", "et"]
    assert [(e.label, e.languages) for e in plan.tokenizers_scored()] == [("char", ("en",))]
    assert plan.uncovered() == {}
    with_german = _plan(tmp_path, {"ud_root": "ud"}, german=True).analyses["morphscore"]
    assert {k: sorted(v) for k, v in with_german.uncovered().items()} == {"de": ["en", "et"]}
    with pytest.raises(
        TokstudyError,
        match=r"analyses\.morphscore\.languages: no UD treebank "
        r"under ud covers 'eo' \(closest codes: e[nt], e[nt]\)$",
    ):
        _plan(tmp_path, {"ud_root": "ud", "languages": ["eo"]})


@pytest.mark.shared
def test_real_treebanks_all_have_lemmas_and_korean_has_morphemes() -> None:
    found = language_treebanks(UD_ROOT)
    assert len(found) == 24 and len(found["en"]) == 2  # EWT and PUD
    korean = build_items(sorted(found["ko"][0].glob("*.gz")))
    assert korean.lemmas and len(korean.morphemes) > 1000


@pytest.mark.slow
def test_dry_run_plans_the_morphscore_rules(tmp_path: Path) -> None:
    write_treebank(tmp_path / "ud", "English-Toy", "en", WORDS)
    config = tmp_path / "study.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "languages": {"en": {"chatterbot": "english"}},
                "tokenizers": {"char": {}},
                "metrics": ["mu"],
                "analyses": {"morphscore": {"ud_root": str(tmp_path / "ud")}},
            }
        )
    )
    result = snakemake(tmp_path, "-n", config=config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rule morphscore:" in result.stdout and "rule plot_morphscore_heatmap:" in result.stdout
