"""MorphScore-style alignment (tokstudy.analyses.morphscore): items built from a hand-made
treebank of five words, MorphScore's exclusion rule, its chance level (by hand and by
enumerating every placement of the cuts), precision, the two encodings, Finnish compound
lemmas, morpheme-boundary precision/recall, a treebank without lemmas, the planner's checks
and a dry run."""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, SHARED, UD_ROOT
from figures import capture_figures
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers
from workflow_support import snakemake

from tokstudy.analyses import heatmap
from tokstudy.analyses.morphology.chance import above_chance, cut_chance
from tokstudy.analyses.morphology.spans import ALONE, ENCODINGS, IN_CONTEXT, token_boundaries
from tokstudy.analyses.morphscore.items import (
    build_items,
    morphscore_items,
    mseg_boundaries,
    score,
    stem_item,
)
from tokstudy.analyses.morphscore.tables import plot_morphscore, write_morphscore
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.char import CharTokenizer
from tokstudy.tokenizers.base import TrainSpec
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


@pytest.mark.parametrize("encoding", ENCODINGS)  # WordPiece splits on whitespace first
def test_morphscore_excludes_whole_words_and_strips_wordpiece_markers(
    tmp_path: Path, encoding: str
) -> None:
    folder = write_treebank(tmp_path, "English-Toy", "en", WORDS)
    result = score(build_items(sorted(folder.glob("*.gz"))), wordpiece(), encoding)
    assert result["items"] == 3
    assert (result["scored"], result["excluded_single_token"]) == (2, 1)
    assert result["excluded_unmappable"] == 0
    assert result["morphscore"] == pytest.approx(1 / 2)  # dog|s hit, wal|ked miss
    # one cut in each: dogs 1 of 3 positions, walked 1 of 5; mean 4/15
    assert result["morphscore_chance"] == pytest.approx((1 / 3 + 1 / 5) / 2)
    assert result["morphscore_corrected"] == pytest.approx((1 / 2 - 4 / 15) / (1 - 4 / 15))
    assert result["precision"] == pytest.approx(1 / 2)  # 1 hit of 2 cuts
    assert result["precision_chance"] == pytest.approx((1 / 3 + 1 / 5) / 2)  # 4/15 of 2 cuts
    assert result["morphscore_single_token_as_0"] == pytest.approx(1 / 3)  # Houses counts 0
    # token cuts {3} in dogs and in walked; morpheme cuts {3}, {4}, {5}: 1 of 2, 1 of 3
    assert result["boundary_precision"] == pytest.approx(1 / 2)
    assert result["boundary_recall"] == pytest.approx(1 / 3)


def test_two_cuts_in_six_positions_hit_a_boundary_by_chance_one_time_in_three() -> None:
    assert cut_chance(7, 2) == pytest.approx(1 / 3)  # 7 characters: 6 interior positions
    # by hand: of the 15 pairs of positions, the 5 that hold position 3
    pairs = list(itertools.combinations(range(1, 7), 2))
    assert len(pairs) == 15 and sum(3 in pair for pair in pairs) == 5
    assert cut_chance(1, 0) == 0.0
    with pytest.raises(TokstudyError, match="7 cuts do not fit in a word of 7 characters"):
        cut_chance(7, 7)


@given(st.integers(2, 9), st.data())
def test_chance_is_the_share_of_all_placements_that_cut_the_boundary(length: int, data) -> None:
    """Oracle: every placement of ``cuts`` among the interior positions, enumerated."""
    cuts = data.draw(st.integers(0, length - 1))
    boundary = data.draw(st.integers(1, length - 1))
    placements = list(itertools.combinations(range(1, length), cuts))
    hit = sum(boundary in placement for placement in placements)
    assert cut_chance(length, cuts) == pytest.approx(hit / len(placements))


def test_above_chance_is_zero_at_chance_and_one_at_the_top() -> None:
    assert above_chance(0.4, 0.4) == 0.0 and above_chance(1.0, 0.25) == 1.0
    assert above_chance(0.1, 0.25) == pytest.approx(-0.2)  # below chance: negative
    assert math.isnan(above_chance(1.0, 1.0)) and math.isnan(above_chance(float("nan"), 0.5))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_char_tokenizer_scores_1_at_chance_1_and_low_precision(
    tmp_path: Path, encoding: str
) -> None:
    folder = write_treebank(tmp_path, "English-Toy", "en", WORDS)
    corpus = tmp_path / "chars.txt"  # the space is in the corpus, so ▁ is a token
    corpus.write_text(" ".join(w[0] for w in WORDS) + "\n", encoding="utf-8")
    chars = CharTokenizer.train(corpus, TrainSpec(None))
    result = score(build_items(sorted(folder.glob("*.gz"))), chars, encoding)
    # by hand: dogs 3 cuts in 3 positions, walked 5 in 5, Houses 5 in 5: every position
    assert (result["scored"], result["excluded_single_token"]) == (3, 0)
    assert result["morphscore"] == 1.0 and result["morphscore_chance"] == 1.0
    assert math.isnan(result["morphscore_corrected"])  # cutting everywhere says nothing
    assert result["precision"] == pytest.approx(3 / 13)  # 3 hits among 3 + 5 + 5 cuts
    assert result["precision_chance"] == pytest.approx(3 / 13)
    assert result["morphscore_single_token_as_0"] == 1.0


def gemma_style_unigram() -> PretrainedHF:
    """SentencePiece-style pieces without a dummy prefix (as Gemma 3): a word alone has no
    ``▁``, after a space it has one, and the pieces differ: walk|ed alone, ▁wa|lked after
    a space."""
    pieces = ["walk", "ed", "▁wa", "lked"]
    tokenizer = HFTokenizer(models.Unigram([("[UNK]", 0.0)] + [(p, -1.0) for p in pieces], 0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")
    tokenizer.decoder = decoders.Metaspace(prepend_scheme="never")
    return PretrainedHF(tokenizer)


def test_the_leading_space_marker_moves_the_cut_in_context(tmp_path: Path) -> None:
    tokenizer = gemma_style_unigram()
    assert tokenizer.tokenize("walked") == ["walk", "ed"]
    assert tokenizer.tokenize(" walked") == ["▁wa", "lked"]
    assert token_boundaries(tokenizer, "walked", ALONE) == (4,)
    assert token_boundaries(tokenizer, "walked", IN_CONTEXT) == (2,)
    folder = write_treebank(tmp_path, "English-Toy", "en", [("walked", "walk", "VERB", "_")])
    items = build_items(sorted(folder.glob("*.gz")))
    assert score(items, tokenizer, ALONE)["morphscore"] == 1.0  # walk|ed
    assert score(items, tokenizer, IN_CONTEXT)["morphscore"] == 0.0  # wa|lked


@pytest.mark.shared
def test_real_tokenizers_mark_a_word_start_only_after_a_space() -> None:
    gemma = PretrainedHF.from_source(SHARED / "pretrained" / "gemma-3" / "tokenizer.json")
    assert gemma.tokenize("houses") == ["houses"]
    assert gemma.tokenize(" houses") == ["▁houses"]
    assert token_boundaries(gemma, "walked", ALONE) == (4,)  # walk|ed
    assert token_boundaries(gemma, "walked", IN_CONTEXT) == ()  # ▁walked
    gpt = PretrainedHF.from_source(SHARED / "pretrained" / "gpt-4o" / "tokenizer.json")
    assert gpt.tokenize(" walked") == ["Ġwalked"] and gpt.tokenize("walked") == ["walk", "ed"]
    llama = PretrainedHF.from_source(SHARED / "pretrained" / "llama-2" / "tokenizer.json")
    # Llama 2 prepends ▁ itself: the space becomes a token of its own, the cuts stay
    assert llama.tokenize(" unhappiness")[0] == "▁"
    assert token_boundaries(llama, "unhappiness", ALONE) == token_boundaries(
        llama, "unhappiness", IN_CONTEXT
    )


def test_finnish_compound_lemmas_give_items(tmp_path: Path) -> None:
    words = [
        ("aamupalaa", "aamu#pala", "NOUN", "_"),  # item: aamupala|a (8), from a compound
        ("aamupala", "aamu#pala", "NOUN", "_"),  # form equals the lemma without #
        ("talossa", "talo", "NOUN", "_"),  # item: talo|ssa (4)
    ]
    folder = write_treebank(tmp_path, "Finnish-Toy", "fi", words)
    items = build_items(sorted(folder.glob("*.gz")))
    assert items.stems == {("aamupalaa", "aamupala"): 8, ("talossa", "talo"): 4}
    assert items.compounds == {("aamupalaa", "aamupala")}
    assert items.skipped == {"form equals lemma": 1}
    assert stem_item("aamupalaa", "aamu#pala") == 8


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
    result = score(items, wordpiece(), IN_CONTEXT)
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
    assert table[["tokenizer", "language", "encoding", "scored"]].values.tolist() == [
        ["wp", "en", "in_context", 2],
        ["wp", "en", "alone", 2],
    ]
    notes = json.loads(outputs[2].read_text())["languages"]
    assert notes["de"]["skipped"] == "no lemmas in the treebank"
    assert "skipped" not in notes["en"] and notes["en"]["items"] == 3
    assert notes["en"]["items_from_compound_lemmas"] == 0
    assert pd.read_csv(outputs[0])["morphscore"].tolist() == [0.5, 0.5]


def test_the_heat_map_shows_the_corrected_score_in_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures = capture_figures(monkeypatch, heatmap)
    table = pd.DataFrame(
        {
            "tokenizer": ["a", "a", "a", "b", "b"],
            "language": ["en", "en", "fi", "en", "en"],
            "encoding": ["in_context", "alone", "in_context", "in_context", "alone"],
            "morphscore_corrected": [0.5, 0.9, -0.25, float("nan"), 0.7],
        }
    )
    table.to_csv(tmp_path / "morphscore.csv", index=False)
    outputs = [tmp_path / "heat.png", tmp_path / "heat.pdf"]
    plot_morphscore(tmp_path / "morphscore.csv", outputs)
    grid, colour_bar = figures[0].axes
    cells = grid.images[0].get_array()  # en, fi down; a, b across; alone rows left out
    assert cells.mask.tolist() == [[False, True], [False, True]]
    assert cells.filled(9).tolist() == [[0.5, 9], [-0.25, 9]]
    assert grid.images[0].norm.vmin == -0.5 and grid.images[0].norm.vmax == 0.5  # about 0
    assert colour_bar.get_ylabel() == "morphscore_corrected"
    assert all(path.stat().st_size > 1000 for path in outputs)


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


def test_the_rankings_script_orders_by_the_published_and_the_study_score() -> None:
    spec = importlib.util.spec_from_file_location(
        "morphscore_rankings", REPO / "scripts" / "morphscore_rankings.py"
    )
    rankings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rankings)
    rows = [  # a: high raw score alone, near chance in context; b the other way round
        (tokenizer, language, encoding, raw, corrected)
        for language in ("en", "fi")
        for tokenizer, encoding, raw, corrected in [
            ("a", "alone", 0.8, 0.6),
            ("a", "in_context", 0.5, 0.1 if language == "en" else 0.3),
            ("b", "alone", 0.5, 0.2),
            ("b", "in_context", 0.6, 0.4),
        ]
    ]
    table = pd.DataFrame(
        rows, columns=["tokenizer", "language", "encoding", "morphscore", "morphscore_corrected"]
    ).assign(morphscore_chance=0.2, precision=0.5, morphscore_single_token_as_0=0.3)
    frame = rankings.by_tokenizer(table).set_index("tokenizer")
    assert frame.loc["a", "morphscore_alone"] == 0.8 and frame.loc["a", "languages"] == 2
    assert frame.loc["a", "morphscore_corrected"] == pytest.approx(0.2)  # (0.1 + 0.3) / 2
    assert frame[["rank_published", "rank_study"]].to_dict("index") == {
        "b": {"rank_published": 2.0, "rank_study": 1.0},
        "a": {"rank_published": 1.0, "rank_study": 2.0},
    }
    languages = rankings.by_language(table)
    assert languages["published_order"].tolist() == ["a > b", "a > b"]
    assert languages["study_order"].tolist() == ["b > a", "b > a"]
    assert languages["spearman"].tolist() == pytest.approx([-1.0, -1.0])
    assert languages["first_changes"].tolist() == [True, True]
