"""BBPE (byte-level subwords with leading/trailing byte tokens): units, merges, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import hft_lines, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.adapters.bbpe import BBPE
from tokstudy.tokenizers.base import CLS, SEP, SPECIAL_TOKENS, TrainSpec
from tokstudy.tokenizers.bbpe.transformers_tokenizer import BBPETransformersTokenizer
from tokstudy.tokenizers.bbpe.units import split_units

MODES = ("leading_trailing", "none")


def spec(size: int, word_boundary: str = "leading_trailing", **changes: object) -> TrainSpec:
    params = {"word_boundary": word_boundary}
    return TrainSpec(**{"vocab_size": size, "params": params, "label": "xx", **changes})


@pytest.fixture(scope="module")
def ja_lines() -> list[str]:
    """The first 1,500 lines of the real Japanese corpus (no spaces, kanji and kana)."""
    return hft_lines("ja", 1500)


@pytest.fixture(scope="module")
def mixed_corpus(
    tmp_path_factory: pytest.TempPathFactory, english_lines: list[str], ja_lines: list[str]
) -> Path:
    """English dialog lines and Japanese Bible verses, interleaved."""
    lines = [line for pair in zip(english_lines[:1500], ja_lines, strict=False) for line in pair]
    return write_lines(tmp_path_factory.mktemp("bbpe") / "mixed.txt", lines)


@pytest.fixture(scope="module")
def trained(mixed_corpus: Path) -> dict[str, BBPE]:
    return {mode: BBPE.train(mixed_corpus, spec(900, mode)) for mode in MODES}


def test_units_isolate_cjk_punctuation_and_whitespace() -> None:
    text = "Hello, world!  日本語です。한국 x\ty"
    assert split_units(text, implicit_space=True) == [
        "Hello", ",", " ", "world", "!", " ", " ", "日", "本", "語", "で", "す", "。",
        "한", "국", " ", "x", "\t", "y",
    ]  # fmt: skip


def test_single_space_between_words_is_implicit_only_with_word_boundaries() -> None:
    assert split_units("big red  dog ", implicit_space=True) == ["big", "red", " ", " ", "dog", " "]
    assert split_units("big red", implicit_space=False) == ["big", " ", "red"]


def test_vocabulary_starts_with_specials_then_all_leading_then_all_trailing_bytes(
    trained: dict[str, BBPE],
) -> None:
    vocab = trained["leading_trailing"].vocab
    assert len(vocab) == 900
    assert vocab[:5] == list(SPECIAL_TOKENS)
    assert vocab[5:261] == [f"{byte:02X}" for byte in range(256)]
    assert vocab[261:517] == [f"##{byte:02X}" for byte in range(256)]
    assert len(set(vocab)) == len(vocab)
    flat = trained["none"].vocab
    assert flat[5:261] == vocab[5:261] and not any(t.startswith("##") for t in flat)


def test_merges_stay_inside_one_unit(trained: dict[str, BBPE]) -> None:
    for tokenizer in trained.values():
        for token in tokenizer.vocab[len(SPECIAL_TOKENS) :]:
            text = bytes.fromhex(token.removeprefix("##")).decode("utf-8", "ignore")
            assert len(split_units(text, implicit_space=False)) <= 1, token


def test_toy_corpus_merges_ab_then_abc(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "toy.txt", ["ABABABCABC"])
    flat = BBPE.train(corpus, spec(266, "none"))
    # AB (count 4); then (AB)C and (AB)(AB) tie at 2 and the smaller id pair (AB, C) wins;
    # then all pairs have count 1 and the smallest (left id, right id) wins each time
    assert flat.merges == [
        ("41", "42"),
        ("4142", "43"),
        ("4142", "4142"),
        ("414243", "414243"),
        ("41424142", "414243414243"),
    ]
    marked = BBPE.train(corpus, spec(519, "leading_trailing"))
    # only the first A is leading: the trailing forms merge first
    assert marked.merges == [("##41", "##42"), ("##4142", "##43")]
    assert marked.tokenize("ABABABCABC") == ["41", "##42", "##4142", "##414243", "##414243"]


def test_size_the_corpus_cannot_reach_names_language_and_sizes(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "toy.txt", ["ABABABCABC"])
    with pytest.raises(VocabSizeError, match=r"bbpe \(xx\): vocabulary size 267 .* reached 266"):
        BBPE.train(corpus, spec(267, "none"))
    adjusted = BBPE.train(corpus, spec(267, "none", size_policy="adjust"))
    # 256 bytes + 5 special tokens + 5 merges, until the line is one symbol and nothing is
    # left to merge: AB (10 symbols -> 6), ABC (-> 4), ABAB (-> 3), ABCABC (-> 2), the line
    assert len(adjusted.vocab) == 256 + 5 + 5


@pytest.mark.parametrize(("mode", "smallest"), [("leading_trailing", 517), ("none", 261)])
def test_byte_tokens_count_toward_the_size(tmp_path: Path, mode: str, smallest: int) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["abc abd", "日本"])
    with pytest.raises(VocabSizeError, match=rf"size {smallest - 1} .* reached {smallest}\b"):
        BBPE.train(corpus, spec(smallest - 1, mode))
    assert len(BBPE.train(corpus, spec(smallest, mode)).vocab) == smallest


def test_unseen_cjk_character_becomes_byte_pieces(tmp_path: Path) -> None:
    # 蕉 U+8549 and 蕪 U+856A share the UTF-8 prefix E8 95 with the unseen 蕤 U+8564 (E8 95 A4)
    lines = ["芭蕉の葉。", "蕪を煮る。", "蕉と蕪、芭蕉。"] * 20
    tokenizer = BBPE.train(write_lines(tmp_path / "c.txt", lines), spec(530))
    assert tokenizer.tokenize("蕤") == ["E895", "##A4"]
    assert tokenizer.tokenize("芭蕉と蕤。") == [
        "E88AAD",
        "E89589",
        "E381A8",
        "E895",
        "##A4",
        "E38082",
    ]
    assert tokenizer.decode(tokenizer.encode("芭蕉と蕤。")) == "芭蕉と蕤。"


@pytest.mark.shared
def test_real_japanese_rare_character_round_trips(ja_lines: list[str], tmp_path: Path) -> None:
    tokenizer = BBPE.train(write_lines(tmp_path / "ja.txt", ja_lines), spec(1200))
    assert not any("蕤" in line for line in ja_lines)
    pieces = tokenizer.tokenize("蕤")
    assert len(pieces) > 1 and not pieces[0].startswith("##")
    assert all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "E895A4"
    sentence = "神は蕤を見た。"
    assert tokenizer.decode(tokenizer.encode(sentence)) == sentence


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40))
def test_round_trip_of_arbitrary_unicode_never_uses_unk(
    trained: dict[str, BBPE], mode: str, text: str
) -> None:
    tokenizer = trained[mode]
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.unk_id not in ids


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.text(alphabet="ab日。, \t", min_size=1, max_size=4), max_size=6))
def test_round_trip_of_spacing_around_words_punctuation_and_cjk(
    trained: dict[str, BBPE], words: list[str]
) -> None:
    text = " ".join(words)
    tokenizer = trained["leading_trailing"]
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert tokenizer.encode_batch([text, text[::-1]]) == [
        tokenizer.encode(text),
        tokenizer.encode(text[::-1]),
    ]


def test_without_word_boundaries_spaces_are_explicit_tokens(trained: dict[str, BBPE]) -> None:
    assert "20" not in trained["leading_trailing"].tokenize("big red")
    assert "20" in trained["none"].tokenize("big red")


@pytest.mark.parametrize("mode", MODES)
def test_two_trainings_write_identical_files(mixed_corpus: Path, tmp_path: Path, mode: str) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        BBPE.train(mixed_corpus, spec(700, mode, threads=2)).save(tmp_path / name)
    assert (tmp_path / "a" / "bbpe.json").read_bytes() == (
        tmp_path / "b" / "bbpe.json"
    ).read_bytes()


def test_save_and_load_keep_mode_vocabulary_and_ids(
    trained: dict[str, BBPE], tmp_path: Path
) -> None:
    sample = "Hello there, 神は光を見た。"
    for mode, tokenizer in trained.items():
        (tmp_path / mode).mkdir()
        tokenizer.save(tmp_path / mode)
        loaded = BBPE.load(tmp_path / mode)
        assert loaded.word_boundary == mode and loaded.vocab == tokenizer.vocab
        assert loaded.encode(sample) == tokenizer.encode(sample)


def test_transformers_tokenizer_matches_adapter_and_reloads_offline(
    trained: dict[str, BBPE], tmp_path: Path
) -> None:
    sample = "Hello there, [MASK] 神は蕤を見た。 "
    tokenizer = trained["leading_trailing"]
    wrapped = tokenizer.to_transformers()
    assert [wrapped.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    ids = wrapped(sample)["input_ids"]
    assert ids == [2, *tokenizer.encode(sample), 3]
    assert wrapped.decode(ids, skip_special_tokens=True) == sample
    pair = wrapped("a b", "c")["input_ids"]
    assert wrapped.convert_ids_to_tokens(pair) == [CLS, "61", "62", SEP, "63", SEP]
    wrapped.save_pretrained(tmp_path)
    reloaded = BBPETransformersTokenizer.from_pretrained(tmp_path, local_files_only=True)
    assert reloaded(sample)["input_ids"] == ids
    assert reloaded.mask_token == "[MASK]" and len(reloaded) == len(tokenizer.vocab)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=30))
def test_transformers_tokenizer_round_trips_arbitrary_unicode(
    trained: dict[str, BBPE], text: str
) -> None:
    wrapped = trained["leading_trailing"].to_transformers()
    assert wrapped.decode(wrapped(text)["input_ids"], skip_special_tokens=True) == text


def test_bad_parameters_and_files_are_clear_errors(mixed_corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match="unknown parameter 'boundary'"):
        BBPE.train(mixed_corpus, TrainSpec(600, {"boundary": "none"}))
    with pytest.raises(TokstudyError, match=r"params\.word_boundary: must be one of"):
        BBPE.train(mixed_corpus, spec(600, "leading"))
    (tmp_path / "bbpe.json").write_text('{"format_version": 1}', "utf-8")
    with pytest.raises(TokstudyError, match=r"bbpe\.json: not a bbpe model file"):
        BBPE.load(tmp_path)
