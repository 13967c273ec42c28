"""The analysis library on small hand-checkable tokenizers, plus real UD German data."""

from __future__ import annotations

import gzip
import logging
import math
from pathlib import Path

import conllu
import pandas as pd
import pytest
from conftest import UD_ROOT
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers

from tokstudy.analyses.morphology.alignment import (
    alignment_summary,
    morphological_alignment,
    stem_boundary,
)
from tokstudy.analyses.morphology.spans import ALONE, ENCODINGS, IN_CONTEXT, token_boundaries
from tokstudy.analyses.multilingual.multilingual import (
    allocate,
    fertility_by_language,
    sample_mixed_corpus,
    temperature_probabilities,
    vocabulary_share,
)
from tokstudy.analyses.parity.parity import parity_summary, tokenization_parity
from tokstudy.analyses.segmentation.segmentation import segmentation_table, word_set
from tokstudy.corpora.ud import find_ud_treebank, treebank_files
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_text_lines
from tokstudy.tokenizers.adapters.char import CharTokenizer
from tokstudy.tokenizers.adapters.hf_tokenizers import HFBPE, HFUnigram, HFWordPiece
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, TrainSpec


def wordpiece(tokens: list[str], lowercase: bool = False) -> HFWordPiece:
    """A WordPiece tokenizer with a fixed vocabulary (special tokens first)."""
    vocab = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *tokens])}
    tokenizer = HFTokenizer(models.WordPiece(vocab, unk_token=UNK, continuing_subword_prefix="##"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.WordPiece()
    if lowercase:
        tokenizer.normalizer = normalizers.Lowercase()
    return HFWordPiece(tokenizer)


def metaspace_unigram(pieces: list[str]) -> HFUnigram:
    """A SentencePiece-style Unigram model whose pieces all have the same score."""
    tokenizer = HFTokenizer(models.Unigram([(UNK, 0.0)] + [(p, -1.0) for p in pieces], unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(prepend_scheme="always")
    return HFUnigram(tokenizer)


def byte_level() -> HFBPE:
    """Byte-level BPE without merges: one token per UTF-8 byte."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {symbol: i for i, symbol in enumerate(sorted(alphabet))}
    tokenizer = HFTokenizer(models.BPE(vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return HFBPE(tokenizer)


GERMAN_PIECES = [
    "ver",
    "##steh",
    "##en",
    "##t",
    "ging",
    "gehen",
    "Kind",
    "##er",
    "a",
    "b",
    "c",
    "d",
]


# --- token boundaries ---------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_boundaries_from_wordpiece_pieces(encoding: str) -> None:
    assert token_boundaries(wordpiece(GERMAN_PIECES), "versteht", encoding) == (3, 7)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_boundaries_from_metaspace_pieces(encoding: str) -> None:
    tokenizer = metaspace_unigram(["▁ver", "steh", "en"])
    assert tokenizer.tokenize("verstehen") == ["▁ver", "steh", "en"]  # the dummy prefix: the
    assert tokenizer.tokenize(" verstehen") == ["▁ver", "steh", "en"]  # same in both
    assert token_boundaries(tokenizer, "verstehen", encoding) == (3, 7)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_no_boundary_inside_a_character_split_into_bytes(encoding: str) -> None:
    tokenizer = byte_level()
    assert len(tokenizer.encode("Bäcker")) == 7  # "ä" is two bytes
    # in context the space is a token of its own, which ends at offset 0: no boundary
    assert token_boundaries(tokenizer, "Bäcker", encoding) == (1, 2, 3, 4, 5)


def test_lowercasing_tokenizers_still_map() -> None:
    assert token_boundaries(wordpiece(GERMAN_PIECES, lowercase=True), "VERSTEHT", ALONE) == (3, 7)


def test_words_with_unknown_tokens_cannot_be_mapped() -> None:
    assert token_boundaries(wordpiece(GERMAN_PIECES), "Qualen", IN_CONTEXT) is None


def test_an_unknown_encoding_is_a_clear_error() -> None:
    expected = r"unknown encoding 'sentence' \(one of in_context, alone\)"
    with pytest.raises(TokstudyError, match=expected):
        token_boundaries(wordpiece(GERMAN_PIECES), "versteht", "sentence")


# --- segmentation table -------------------------------------------------------------------


def test_segmentation_table_flags_and_logs_words_absent_from_the_corpus(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tokenizers = {"wp": wordpiece(GERMAN_PIECES), "uni": metaspace_unigram(["▁ver", "steh", "en"])}
    with caplog.at_level(logging.WARNING):
        table = segmentation_table(["verstehen", "versteht"], tokenizers, {"verstehen"})
    assert table.to_dict("list") == {
        "word": ["verstehen", "versteht"],
        "in_corpus": [True, False],
        "wp": ["ver ##steh ##en", "ver ##steh ##t"],
        "uni": ["▁ver steh en", "▁ver steh [UNK]"],
    }
    assert "1 of 2 words are not in the corpus" in caplog.text and "versteht" in caplog.text


def test_segmentation_table_needs_words() -> None:
    with pytest.raises(TokstudyError, match="word list is empty"):
        segmentation_table([" "], {"wp": wordpiece(GERMAN_PIECES)})


# --- morphological alignment --------------------------------------------------------------


@pytest.mark.parametrize(
    ("form", "lemma", "boundary"),
    [
        ("versteht", "verstehen", 7),
        ("gingen", "gehen", 1),
        ("Kinder", "Kind", 4),
        ("Verstehst", "verstehen", 7),  # case-insensitive
        ("ist", "sein", None),  # suppletion: no common prefix
        ("geh", "gehen", None),  # nothing after the stem
        ("Sie", "sie", None),  # not inflected
        ("aamupalaa", "aamu#pala", 8),  # Finnish compound marker: aamupala|a, not aamu|palaa
        ("aamupala", "aamu#pala", None),  # not inflected once the marker is removed
    ],
)
def test_stem_boundary(form: str, lemma: str, boundary: int | None) -> None:
    assert stem_boundary(form, lemma) == boundary


CONLLU = """\
# sent_id = 1
# text = Sie versteht zum Glück.
1\tSie\tsie\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tversteht\tverstehen\tVERB\t_\t_\t0\troot\t_\t_
3-4\tzum\t_\t_\t_\t_\t_\t_\t_\t_
3\tzu\tzu\tADP\t_\t_\t5\tcase\t_\t_
4\tdem\tder\tDET\t_\t_\t5\tdet\t_\t_
5\tGlück\tGlück\tNOUN\t_\t_\t2\tobl\t_\t_
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = 2
# text = Kinder gingen, Qualen versteht er.
1\tKinder\tKind\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tgingen\tgehen\tVERB\t_\t_\t0\troot\t_\t_
3\t,\t,\tPUNCT\t_\t_\t2\tpunct\t_\t_
4\tQualen\tQual\tNOUN\t_\t_\t5\tobj\t_\t_
5\tversteht\tverstehen\tVERB\t_\t_\t2\tconj\t_\t_
6\ter\ter\tPRON\t_\t_\t5\tnsubj\t_\t_
7\tist\tsein\tAUX\t_\t_\t5\taux\t_\t_

"""


def test_alignment_on_a_hand_made_treebank(tmp_path: Path) -> None:
    path = tmp_path / "tiny.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    table = morphological_alignment([path], wordpiece(GERMAN_PIECES), IN_CONTEXT)
    assert table[
        ["form", "count", "stem_boundary", "token_boundaries", "mappable", "aligned"]
    ].to_dict("records") == [
        # Kind|er → Kind ##er: token boundary 4 = stem boundary 4
        {
            "form": "Kinder",
            "count": 1,
            "stem_boundary": 4,
            "token_boundaries": "4",
            "mappable": True,
            "aligned": True,
        },
        {
            "form": "Qualen",
            "count": 1,
            "stem_boundary": 4,
            "token_boundaries": "",
            "mappable": False,
            "aligned": False,
        },
        # g|ingen → ging ##en: boundary 4, stem boundary 1
        {
            "form": "gingen",
            "count": 1,
            "stem_boundary": 1,
            "token_boundaries": "4",
            "mappable": True,
            "aligned": False,
        },
        {
            "form": "versteht",
            "count": 2,
            "stem_boundary": 7,
            "token_boundaries": "3 7",
            "mappable": True,
            "aligned": True,
        },
    ]
    summary = alignment_summary(table).iloc[0]
    assert (summary["types"], summary["tokens"], summary["unmappable_types"]) == (4, 5, 1)
    assert summary["aligned_share_types"] == pytest.approx(2 / 3)
    assert summary["aligned_share_tokens"] == pytest.approx(3 / 4)
    # random cuts, as many as WordPiece's: Kinder 1 of 5 positions, gingen 1 of 5,
    # versteht 2 of 7 (2 tokens); Qualen is not mappable
    assert table["chance"].tolist()[:1] + table["chance"].tolist()[2:] == pytest.approx(
        [1 / 5, 1 / 5, 2 / 7]
    )
    assert summary["chance_types"] == pytest.approx((1 / 5 + 1 / 5 + 2 / 7) / 3)  # 8/35
    assert summary["chance_tokens"] == pytest.approx((1 / 5 + 1 / 5 + 2 * 2 / 7) / 4)  # 17/70
    assert summary["corrected_types"] == pytest.approx((2 / 3 - 8 / 35) / (1 - 8 / 35))
    assert summary["corrected_tokens"] == pytest.approx((3 / 4 - 17 / 70) / (1 - 17 / 70))


def test_find_treebank_prefers_the_default_then_any_of_the_language(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "UD_German-HDT"
    other.mkdir()
    (other / "de_hdt-ud-test.conllu").write_text(CONLLU, encoding="utf-8")
    assert find_ud_treebank(tmp_path, "de") == other
    preferred = tmp_path / "UD_German-GSD"
    preferred.mkdir()
    (preferred / "de_gsd-ud-dev.conllu.gz").write_bytes(gzip.compress(CONLLU.encode()))
    assert find_ud_treebank(tmp_path, "de") == preferred
    with caplog.at_level(logging.INFO):
        assert find_ud_treebank(tmp_path, "fi") is None
        assert find_ud_treebank(tmp_path, "zu") is None
    assert (
        "no UD Finnish treebank" in caplog.text
        and "no UD treebank known for language 'zu'" in caplog.text
    )


def test_malformed_conllu_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.conllu"
    path.write_text("x\tWort\tWort\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"bad\.conllu: not valid CoNLL-U"):
        morphological_alignment([path], wordpiece(GERMAN_PIECES), ALONE)


@pytest.mark.shared
def test_alignment_on_real_german_ud(tmp_path: Path) -> None:
    folder = find_ud_treebank(UD_ROOT, "de")
    assert folder is not None and folder.name == "UD_German-GSD"
    assert find_ud_treebank(UD_ROOT, "ja") is None
    test_file = [p for p in treebank_files(folder) if "test" in p.name]
    with gzip.open(folder / "de_gsd-ud-dev.conllu.gz", "rt", encoding="utf-8") as handle:
        text = [sentence.metadata["text"] for sentence in conllu.parse_incr(handle)]
    corpus = tmp_path / "de.txt"
    corpus.write_text("\n".join(text) + "\n", encoding="utf-8")

    chars = morphological_alignment(
        test_file, CharTokenizer.train(corpus, TrainSpec(None)), IN_CONTEXT
    )
    assert len(chars) > 500
    summary = alignment_summary(chars).iloc[0]
    assert summary["aligned_share_types"] == 1.0  # every cut exists
    assert summary["chance_types"] == 1.0 and math.isnan(summary["corrected_types"])

    pieces = HFWordPiece.train(corpus, TrainSpec(800, label="de"))
    table = morphological_alignment(test_file, pieces, IN_CONTEXT)
    assert table["form"].tolist() == chars["form"].tolist()
    share = alignment_summary(table).iloc[0]["aligned_share_types"]
    assert 0.0 < share < 1.0


# --- text helpers and multilingual ---


def test_text_helpers_read_plain_and_gzip_and_name_bad_files(tmp_path: Path) -> None:
    (tmp_path / "t.txt.gz").write_bytes(gzip.compress(b"a b\nb c\n"))
    lines = read_text_lines(tmp_path / "t.txt.gz")
    assert lines == ["a b", "b c"] and word_set(lines) == {"a", "b", "c"}
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\n")
    with pytest.raises(TokstudyError, match=r"bad\.txt: not valid UTF-8"):
        read_text_lines(tmp_path / "bad.txt")
    with pytest.raises(TokstudyError, match=r"missing\.txt: no such file"):
        read_text_lines(tmp_path / "missing.txt")


def test_temperature_probabilities() -> None:
    assert temperature_probabilities({"a": 100, "b": 1}, 1.0) == pytest.approx(
        {"a": 100 / 101, "b": 1 / 101}
    )
    assert temperature_probabilities({"a": 100, "b": 1}, 2.0) == pytest.approx(
        {"a": 10 / 11, "b": 1 / 11}
    )
    with pytest.raises(TokstudyError, match="temperature must be positive"):
        temperature_probabilities({"a": 1}, 0.0)


def test_allocation_rounds_by_largest_remainder() -> None:
    assert allocate({"a": 0.5, "b": 0.5}, 3) == {"a": 2, "b": 1}
    assert allocate({"a": 0.7, "b": 0.2, "c": 0.1}, 4) == {"a": 3, "b": 1, "c": 0}


def test_mixed_corpus_is_seeded_and_upsamples_small_languages(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1\na2\na3\na4\n", encoding="utf-8")
    (tmp_path / "b.txt.gz").write_bytes(gzip.compress(b"b1\n\n"))
    corpora = {"a": tmp_path / "a.txt", "b": tmp_path / "b.txt.gz"}
    natural = sample_mixed_corpus(corpora, tmp_path / "mix1.txt", temperature=1.0, seed=3)
    assert natural["sampled_lines"].tolist() == [4, 1]
    assert sorted(read_text_lines(tmp_path / "mix1.txt")) == ["a1", "a2", "a3", "a4", "b1"]

    flat = sample_mixed_corpus(
        corpora, tmp_path / "mix2.txt", temperature=1e6, seed=3, total_lines=10
    )
    assert flat["sampled_lines"].tolist() == [5, 5]
    mixed = read_text_lines(tmp_path / "mix2.txt")
    assert mixed.count("b1") == 5 and len(set(mixed) - {"b1"}) == 4
    sample_mixed_corpus(corpora, tmp_path / "mix3.txt", temperature=1e6, seed=3, total_lines=10)
    assert read_text_lines(tmp_path / "mix3.txt") == mixed


def test_the_mix_can_say_the_language_of_each_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1\na2\na3\na4\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("b1\nb2\n", encoding="utf-8")
    corpora = {"a": tmp_path / "a.txt", "b": tmp_path / "b.txt"}
    sample_mixed_corpus(
        corpora, tmp_path / "mix.txt", 1.0, 5, total_lines=9, languages_output=tmp_path / "l.txt"
    )
    mixed, codes = read_text_lines(tmp_path / "mix.txt"), read_text_lines(tmp_path / "l.txt")
    assert len(mixed) == len(codes) == 9
    assert all(line[0] == code for line, code in zip(mixed, codes, strict=True))
    sample_mixed_corpus(corpora, tmp_path / "same.txt", 1.0, 5, total_lines=9)
    assert read_text_lines(tmp_path / "same.txt") == mixed  # the file changes nothing


def test_empty_corpus_cannot_be_sampled(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=r"e\.txt: corpus for 'e' has no non-empty lines"):
        sample_mixed_corpus({"e": tmp_path / "e.txt"}, tmp_path / "m.txt", 1.0, 0)


def test_vocabulary_share_counts_items_used_and_exclusive() -> None:
    tokenizer = wordpiece(["a", "b", "c", "d"])
    table = vocabulary_share(tokenizer, {"x": ["a b zz"], "y": ["b c"]}).set_index("language")
    assert table["items_used"].to_dict() == {"x": 2, "y": 2}  # [UNK] for "zz" is not counted
    assert table["share_used"].to_dict() == {"x": 0.5, "y": 0.5}  # of a, b, c, d
    assert table["items_exclusive"].to_dict() == {"x": 1, "y": 1}
    assert table["share_exclusive"].to_dict() == {"x": 0.25, "y": 0.25}


def test_fertility_by_language() -> None:
    tokenizer = wordpiece(["ver", "##steh", "##en", "a"])
    table = fertility_by_language(tokenizer, {"de": ["verstehen a", "qq"]}).iloc[0]
    assert (table["words"], table["tokens"]) == (3, 5)
    assert table["fertility"] == pytest.approx(5 / 3)
    assert table["tokens_per_char"] == pytest.approx(5 / 12)
    assert table["unk_rate"] == pytest.approx(1 / 5)


# --- parity -------------------------------------------------------------------------------


def test_parity_ratios_and_summary() -> None:
    tokenizer = wordpiece(["a", "b", "c", "d"])
    table = tokenization_parity(tokenizer, tokenizer, ["a b", "c", ""], ["a b c d", "d", "a"])
    assert table["line"].tolist() == [1, 2, 3]
    assert table["reference_tokens"].tolist() == [2, 1, 0]
    assert table["target_tokens"].tolist() == [4, 1, 1]
    assert table["ratio"].tolist()[:2] == [2.0, 1.0] and math.isnan(table["ratio"].iloc[2])
    summary = parity_summary(table).iloc[0]
    assert summary["lines"] == 3 and summary["undefined"] == 1
    assert (summary["mean"], summary["median"]) == (1.5, 1.5)
    assert summary["q05"] == pytest.approx(1.05) and summary["q95"] == pytest.approx(1.95)


def test_parity_needs_line_aligned_text() -> None:
    tokenizer = wordpiece(["a"])
    with pytest.raises(TokstudyError, match="2 reference lines, 3 target lines"):
        tokenization_parity(tokenizer, tokenizer, ["a", "a"], ["a", "a", "a"])


@pytest.mark.filterwarnings("error")
def test_parity_of_no_lines_and_of_undefined_lines() -> None:
    tokenizer = wordpiece(["a"])
    empty = tokenization_parity(tokenizer, tokenizer, [], [])
    assert len(empty) == 0
    assert empty["reference_tokens"].dtype == empty["target_tokens"].dtype == "int64"
    table = tokenization_parity(tokenizer, tokenizer, ["", ""], ["a", ""])
    summary = parity_summary(table).iloc[0]
    assert (summary["lines"], summary["undefined"]) == (2, 2)
    assert summary[["mean", "median", "q05", "q25", "q75", "q95"]].isna().all()


def test_parity_summary_quantile_columns() -> None:
    table = pd.DataFrame({"ratio": [1.0, 2.0, 3.0]})
    summary = parity_summary(table, quantiles=[0.5])
    assert list(summary.columns) == ["lines", "undefined", "mean", "median", "q50"]
