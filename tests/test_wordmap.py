"""Wordmap building blocks: word maps, z-score selection, vocabulary, segmenter, tagging."""

from __future__ import annotations

import math
from itertools import combinations, pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.wordmap.maps import LexemeMatrix, WordMaps, clean_map, word_maps
from tokstudy.tokenizers.wordmap.presegment import WordmapPreSegmenter
from tokstudy.tokenizers.wordmap.segmenter import Segmenter
from tokstudy.tokenizers.wordmap.tagging import HanTaFlagger, lexeme_list
from tokstudy.tokenizers.wordmap.vocabulary import (
    AffixSplit,
    build_segment_vocabulary,
    collect_vocabulary,
    split_by_zscore,
    zscores,
)

# --- word maps: the thesis's vectors for the target "verstehen" ---------------------------


def segmentation_score(lengths: list[int]) -> float:
    """The thesis's ``f(s) = Σ_i ((|s_i| / t) / k) ** (1 / |s_i|)`` of a segmentation given
    by its segment lengths (``t`` their sum, ``k`` their number): the oracle the memoised
    search is checked against."""
    total, count = sum(lengths), len(lengths)
    return sum(((size / total) / count) ** (1.0 / size) for size in lengths)


def test_map_against_a_longer_word_matching_at_both_ends() -> None:
    assert word_maps("verstehen", "verarbeiten") == WordMaps("111000000", "001000011")


def test_map_against_a_shorter_word_matching_on_the_left() -> None:
    assert word_maps("verstehen", "variiert") == WordMaps("101001000", None)


def test_map_against_a_word_of_the_same_length_is_made_once() -> None:
    assert word_maps("verstehen", "vormachen") == WordMaps("101000111", None)


def test_no_map_when_neither_end_matches() -> None:
    assert word_maps("verstehen", "anstrebtest") == WordMaps(None, None)


def test_maps_ignore_case() -> None:
    assert word_maps("Verstehen", "VERARBEITEN") == WordMaps("111000000", "001000011")


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("11101100101", "11100000001"),
        ("101000111", "100000111"),
        ("001000011", "000000011"),
        ("0110", "0000"),
        ("111", "111"),
    ],
)
def test_cleaning_keeps_only_the_runs_at_the_ends(raw: str, cleaned: str) -> None:
    assert clean_map(raw) == cleaned


def test_summed_maps_of_verstehen_by_hand() -> None:
    lexemes = ["verstehen", "verarbeiten", "variiert", "vormachen", "anstrebtest"]
    counts = LexemeMatrix(lexemes, width=11).counts("verstehen")
    # cleaned maps: 111000000, 000000011 (verarbeiten), 100000000 (variiert),
    # 100000111 (vormachen); the target itself is skipped
    assert counts.prefix.tolist() == [3, 1, 1, 0, 0, 0, 0, 0, 0]
    assert counts.suffix.tolist() == [0, 0, 0, 0, 0, 0, 1, 2, 2]
    # both means are 5/9: "v", "e", "r" and "h", "e", "n" lie above them
    assert split_by_zscore("verstehen", counts, 0.0) == AffixSplit("ver", "ste", "hen")
    # a higher threshold keeps only the more shared edges
    assert split_by_zscore("verstehen", counts, 1.0) == AffixSplit("v", "ersteh", "en")


def runs(bits: str) -> tuple[list[int], list[int]]:
    """The leading and the trailing run of a cleaned map, as 0/1 lists."""
    lead = len(bits) - len(bits.lstrip("1"))
    trail = len(bits) - len(bits.rstrip("1"))
    size = len(bits)
    return [int(i < lead) for i in range(size)], [int(i >= size - trail) for i in range(size)]


words = st.text(alphabet="abc", min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(target=words, lexemes=st.lists(words, min_size=1, max_size=8))
def test_vectorised_counts_equal_the_sums_over_pair_maps(target: str, lexemes: list[str]) -> None:
    prefix = np.zeros(len(target), dtype=int)
    suffix = np.zeros(len(target), dtype=int)
    for other in sorted(set(lexemes) - {target}):
        maps = word_maps(target, other)
        for bits in (maps.left, maps.right):
            if bits is not None:
                lead, trail = runs(clean_map(bits))
                prefix += lead
                suffix += trail
    width = max(len(w) for w in [target, *lexemes])
    counts = LexemeMatrix(sorted(set(lexemes)), width).counts(target)
    assert counts.prefix.tolist() == prefix.tolist()
    assert counts.suffix.tolist() == suffix.tolist()


# --- z-scores and the vocabulary ----------------------------------------------------------


def test_zscores_use_the_population_standard_deviation() -> None:
    # mean 2, population std sqrt(2/3)
    assert zscores(np.array([1, 2, 3])) == pytest.approx([-math.sqrt(1.5), 0.0, math.sqrt(1.5)])
    assert zscores(np.array([4, 4, 4])).tolist() == [0.0, 0.0, 0.0]


def test_outliers_go_back_to_the_stem() -> None:
    splits = [
        AffixSplit("ver", "steh", "en"),
        AffixSplit("ver", "kauf", "t"),
        AffixSplit("ab", "geb", "en"),  # "ab" seen once: back to the stem
        AffixSplit("s", "piel", "t"),  # one-character prefix: back to the stem
        AffixSplit("", "g", "en"),  # stem of one character: target dropped
    ]
    vocabulary = collect_vocabulary(splits, min_affix_count=2, min_stem_length=2)
    assert vocabulary.functional == ("en", "t", "ver")
    assert vocabulary.lexemic == ("abgeb", "kauf", "spiel", "steh")


def test_vocabulary_from_a_small_lexeme_list() -> None:
    lexemes = ["verkaufen", "verkauft", "verlaufen", "verlauft", "vertrauen", "vertraut"]
    vocabulary = build_segment_vocabulary(lexemes)
    # every target shares "ver" with the other five words. ver|k|aufen, ver|l|aufen, …:
    # stems of one character drop those targets; ver|trau|en and ver|trau|t keep theirs,
    # but "en" and "t" are seen once each, so they go back to the stems
    assert vocabulary.functional == ("ver",)
    assert vocabulary.lexemic == ("trauen", "traut")


def test_empty_lexeme_list_is_a_clear_error() -> None:
    with pytest.raises(TokstudyError, match="lexeme list is empty"):
        build_segment_vocabulary([])


# --- the score and the segmenter ----------------------------------------------------------


def test_score_by_hand() -> None:
    assert segmentation_score([9]) == 1.0  # one segment: (1/1)^(1/9)
    assert segmentation_score([2, 2]) == pytest.approx(1.0)  # 2 · (1/4)^(1/2)
    assert segmentation_score([1, 1]) == pytest.approx(0.5)  # 2 · (1/4)^1
    # ver|steh|en: (1/9)^(1/3) + (4/27)^(1/4) + (2/27)^(1/2)
    assert segmentation_score([3, 4, 2]) == pytest.approx(0.480750 + 0.620403 + 0.272166, abs=1e-6)


def test_segmenter_picks_the_best_score_and_keeps_case() -> None:
    segmenter = Segmenter(["ver", "steh", "en", "versteh", "stehen"])
    # ver|stehen 1.3830 > ver|steh|en 1.3733 > versteh|en 1.2071
    assert segmenter.segment("Verstehen") == ("Ver", "stehen")


def test_first_segment_is_never_one_character() -> None:
    assert Segmenter(["v", "erstehen"]).segment("verstehen") == ("verstehen",)


def test_one_missing_final_character_is_accepted() -> None:
    segmenter = Segmenter(["ver", "steh"])
    assert segmenter.segment("versteht") == ("ver", "steh", "t")
    assert segmenter.segment("verstehen") == ("verstehen",)  # two characters missing


def test_max_segments_bounds_the_search() -> None:
    assert Segmenter(["ab"], max_segments=2).segment("abababab") == ("abababab",)
    assert Segmenter(["ab"], max_segments=4).segment("abababab") == ("ab",) * 4


def brute_force(word: str, entries: set[str]) -> float | None:
    """Best score over every composition of the word, or None when none is valid."""
    best = None
    for cuts in range(len(word)):
        for points in combinations(range(1, len(word)), cuts):
            bounds = [0, *points, len(word)]
            pieces = [word[a:b] for a, b in pairwise(bounds)]
            if len(pieces[0]) < 2:
                continue
            inner_ok = all(piece in entries for piece in pieces[:-1])
            last_ok = pieces[-1] in entries or (len(pieces) > 1 and len(pieces[-1]) == 1)
            if inner_ok and last_ok:
                score = segmentation_score([len(p) for p in pieces])
                best = score if best is None else max(best, score)
    return best


@settings(max_examples=60, deadline=None)
@given(
    word=st.text(alphabet="ab", min_size=2, max_size=9),
    entries=st.sets(st.text(alphabet="ab", min_size=1, max_size=4), max_size=10),
)
def test_memoised_search_finds_the_enumeration_optimum(word: str, entries: set[str]) -> None:
    segments = Segmenter(entries, max_segments=len(word)).segment(word)
    expected = brute_force(word, entries)
    assert "".join(segments) == word
    if expected is None:
        assert segments == (word,)
    else:
        assert segmentation_score([len(s) for s in segments]) == pytest.approx(expected, abs=1e-9)


# --- tagging ------------------------------------------------------------------------------


def test_hanta_flags_full_verbs_only() -> None:
    flagger = HanTaFlagger()
    assert flagger.analyze("gegangen") == ("gehen", "VVPP")
    assert flagger.flags("versteht")
    assert not flagger.flags("Haus")
    assert not flagger.flags("2023")


def test_pos_tags_are_configurable_and_checked() -> None:
    assert HanTaFlagger(["NN"]).flags("Haus")
    with pytest.raises(TokstudyError, match="VVX not tags of the HanTa German model"):
        HanTaFlagger(["VVFIN", "VVX"])


def test_lexeme_list_holds_flagged_forms_and_lemmas() -> None:
    counts = {"versteht": 2, "Haus": 5, "gingen": 1}
    flagger = HanTaFlagger()
    assert lexeme_list(counts, flagger, 10) == ["gehen", "gingen", "verstehen", "versteht"]
    assert lexeme_list(counts, flagger, 2) == ["verstehen", "versteht"]


def test_presegmenter_marks_continuations_of_flagged_words_only() -> None:
    segmenter = Segmenter(["haus", "es", "ver", "steh"])
    assert WordmapPreSegmenter(HanTaFlagger(), segmenter).presegment("Hauses") == ["Hauses"]
    assert WordmapPreSegmenter(HanTaFlagger(["NN"]), segmenter).presegment("Hauses") == [
        "Haus",
        "##es",
    ]
    verbs = WordmapPreSegmenter(HanTaFlagger(), segmenter)
    assert verbs.presegment("versteht") == ["ver", "##steh", "##t"]
