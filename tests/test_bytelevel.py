"""GPT-2-style byte-level BPE (hf_bytelevel_bpe): sizes, round trips, transformers wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import pre_tokenizers
from transformers import PreTrainedTokenizerFast

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.adapters.bytelevel import HFByteLevelBPE
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, TrainSpec

SAMPLE = "Hello there, [UNK] 神は蕤を見た。\t "


def spec(size: int, add_prefix_space: bool = False, **changes: object) -> TrainSpec:
    params = {"add_prefix_space": add_prefix_space}
    return TrainSpec(**{"vocab_size": size, "params": params, "label": "en", **changes})


@pytest.fixture(scope="module")
def trained(english_corpus: Path) -> dict[bool, HFByteLevelBPE]:
    """Tokenizers trained without and with ``add_prefix_space``."""
    return {
        prefix: HFByteLevelBPE.train(english_corpus, spec(600, prefix)) for prefix in (False, True)
    }


def test_vocabulary_holds_specials_and_every_byte_within_the_size(
    trained: dict[bool, HFByteLevelBPE],
) -> None:
    vocab = trained[False].vocab
    assert len(vocab) == 600
    assert vocab[:5] == list(SPECIAL_TOKENS)
    assert set(pre_tokenizers.ByteLevel.alphabet()) <= set(vocab[5:])


def test_smallest_size_is_specials_plus_256_bytes(english_corpus: Path) -> None:
    with pytest.raises(VocabSizeError, match=r"\(en\): vocabulary size 260 .* reached 261"):
        HFByteLevelBPE.train(english_corpus, spec(260))
    assert len(HFByteLevelBPE.train(english_corpus, spec(261)).vocab) == 261


def test_size_beyond_the_corpus_is_an_error_or_adjusted(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "toy.txt", ["ab ab"])
    with pytest.raises(VocabSizeError, match=r"vocabulary size 400 .* reached 263"):
        HFByteLevelBPE.train(corpus, spec(400))
    # 256 bytes + 5 special tokens + 2 merges ("a b" -> ab, "Ġ ab" -> Ġab): all it can reach
    assert len(HFByteLevelBPE.train(corpus, spec(400, size_policy="adjust")).vocab) == 256 + 5 + 2


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40))
def test_round_trip_of_arbitrary_unicode_never_uses_unk(
    trained: dict[bool, HFByteLevelBPE], text: str
) -> None:
    tokenizer = trained[False]
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.unk_id not in ids


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=30))
def test_add_prefix_space_adds_one_leading_space_where_there_is_none(
    trained: dict[bool, HFByteLevelBPE], text: str
) -> None:
    tokenizer = trained[True]
    expected = text if text == "" or text.startswith(" ") else " " + text
    assert tokenizer.decode(tokenizer.encode(text)) == expected


def test_special_token_text_is_encoded_as_bytes(trained: dict[bool, HFByteLevelBPE]) -> None:
    tokenizer = trained[False]
    assert tokenizer.unk_id not in tokenizer.encode(UNK)
    assert "".join(tokenizer.tokenize("[MASK]")) == "[MASK]"


def test_transformers_tokenizer_matches_adapter_and_reloads_offline(
    trained: dict[bool, HFByteLevelBPE], tmp_path: Path
) -> None:
    tokenizer = trained[False]
    wrapped = tokenizer.to_transformers()
    ids = wrapped(SAMPLE)["input_ids"]
    assert ids == [2, *tokenizer.encode(SAMPLE), 3]
    assert wrapped.decode(ids, skip_special_tokens=True) == SAMPLE
    wrapped.save_pretrained(tmp_path)
    reloaded = PreTrainedTokenizerFast.from_pretrained(tmp_path, local_files_only=True)
    assert reloaded(SAMPLE)["input_ids"] == ids
    (tmp_path / "adapter").mkdir()
    tokenizer.save(tmp_path / "adapter")
    assert HFByteLevelBPE.load(tmp_path / "adapter").encode(SAMPLE) == tokenizer.encode(SAMPLE)


def test_unknown_or_mistyped_parameters_are_clear_errors(english_corpus: Path) -> None:
    with pytest.raises(TokstudyError, match="unknown parameter 'prefix_space'"):
        HFByteLevelBPE.train(english_corpus, TrainSpec(600, {"prefix_space": True}))
    with pytest.raises(
        TokstudyError,
        match=r"tokenizers\.hf_bytelevel_bpe\.params\.add_prefix_space: must be true or false",
    ):
        HFByteLevelBPE.train(english_corpus, TrainSpec(600, {"add_prefix_space": "yes"}))


def test_readable_tokens_are_text_or_hex_of_the_bytes(
    trained: dict[bool, HFByteLevelBPE],
) -> None:
    tokenizer = trained[False]
    readable = [tokenizer.readable_token(token) for token in tokenizer.tokenize("蕤 there")]
    # 蕤 (E8 95 A4) is unseen: its bytes come out as byte tokens, shown in hex
    assert readable[:3] == ["E8", "95", "A4"]
    assert "".join(readable[3:]) == "▁there"
    assert tokenizer.readable_token("[MASK]") == "[MASK]"


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_characters="\ufffd▁"), max_size=20))
def test_each_readable_token_is_its_decoded_text_or_its_bytes_in_hex(
    trained: dict[bool, HFByteLevelBPE], text: str
) -> None:
    tokenizer = trained[False]
    for token_id in tokenizer.encode(text):
        readable = tokenizer.readable_token(tokenizer.vocab[token_id])
        decoded = tokenizer.decode([token_id])  # the library's decoder: U+FFFD for partial bytes
        if "\ufffd" in decoded:
            assert bytes.fromhex(readable).decode("utf-8", errors="replace") == decoded
        else:
            assert readable == decoded.replace(" ", "▁")
