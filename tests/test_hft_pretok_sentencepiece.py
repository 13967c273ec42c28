"""SentencePiece on HFT pre-tokens: ``sp_bpe_hftpretok`` and ``sp_unigram_hftpretok``."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from conftest import hft_lines, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.hft_pretok import (
    _PretokenizedSentencePiece,
)
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.hft.pretok_transformers_tokenizer import HFTSentencePieceTokenizer
from tokstudy.tokenizers.hft.pretokenize import WORD_BOUNDARY
from tokstudy.tokenizers.registry import adapter_class

pytestmark = pytest.mark.shared


NAMES = ["sp_bpe_hftpretok", "sp_unigram_hftpretok"]
SAMPLE = "Mr. Thackeray said: 2,56,278 new cases  in MUMBAI\ton Monday."


@cache
def corpus() -> Path:
    import tempfile

    lines = hft_lines("en", 1500)
    return write_lines(Path(tempfile.mkdtemp(prefix="tokstudy-hftsp-")) / "en.txt", lines)


@cache
def trained(name: str) -> _PretokenizedSentencePiece:
    return adapter_class(name).train(corpus(), TrainSpec(800, seed=3, label="en"))


def seen_characters() -> list[str]:
    return sorted(set(corpus().read_text(encoding="utf-8")) - {"\n"})


@pytest.mark.parametrize("name", NAMES)
def test_pieces_stay_inside_pretokens(name: str) -> None:
    tokenizer = trained(name)
    assert len(tokenizer.vocab) == 800
    lines = corpus().read_text(encoding="utf-8").splitlines()[:200]
    for line, ids in zip(lines, tokenizer.encode_batch(lines), strict=True):
        pieces = "".join(tokenizer.vocab[i] for i in ids)
        words = pieces.replace(WORD_BOUNDARY, " ").split()
        assert words == tokenizer.pretokenizer.pretokenize(line)
        assert tokenizer.decode(ids) == line


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(text=st.text(st.sampled_from([*seen_characters(), "\t", "\u00a0"])))
def test_round_trip(name: str, text: str) -> None:
    tokenizer = trained(name)
    assert tokenizer.decode(tokenizer.encode(text)) == text


starts_text = st.text(st.sampled_from(list("aBcDé ÉÆ\ufffd☃وكان,.1 \t\xa0")), max_size=14)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None)
@given(lines=st.lists(starts_text, max_size=6))
def test_token_starts_equal_the_generic_decoded_prefix_starts(name: str, lines: list[str]) -> None:
    tokenizer = trained(name)
    fast = tokenizer.encode_batch_starts(lines)
    generic = Tokenizer.encode_batch_starts(tokenizer, lines)
    assert fast.ids.tolist() == generic.ids.tolist()
    assert fast.lengths.tolist() == generic.lengths.tolist()
    assert fast.starts.tolist() == generic.starts.tolist()


def test_token_starts_when_pieces_cross_pretokens() -> None:
    spec = TrainSpec(300, params={"split_by_whitespace": False}, seed=3, label="en")
    tokenizer = adapter_class("sp_bpe_hftpretok").train(corpus(), spec)
    lines = corpus().read_text(encoding="utf-8").splitlines()[:100]
    vocab = tokenizer.vocab
    assert any(WORD_BOUNDARY in vocab[i][1:] for ids in tokenizer.encode_batch(lines) for i in ids)
    fast = tokenizer.encode_batch_starts(lines)
    generic = Tokenizer.encode_batch_starts(tokenizer, lines)
    assert fast.starts.tolist() == generic.starts.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_save_load_and_transformers_tokenizer(name: str, tmp_path: Path) -> None:
    tokenizer = trained(name)
    ids = tokenizer.encode(SAMPLE)
    (tmp_path / "adapter").mkdir()
    tokenizer.save(tmp_path / "adapter")
    assert type(tokenizer).load(tmp_path / "adapter").encode(SAMPLE) == ids
    wrapped = tokenizer.to_transformers()
    assert wrapped.encode(SAMPLE, add_special_tokens=False) == ids
    assert wrapped.decode(ids) == tokenizer.decode(ids) == SAMPLE
    wrapped.save_pretrained(tmp_path / "hf")
    reloaded = HFTSentencePieceTokenizer.from_pretrained(tmp_path / "hf", local_files_only=True)
    assert reloaded(SAMPLE)["input_ids"] == [reloaded.cls_token_id, *ids, reloaded.sep_token_id]
    assert reloaded.decode(reloaded(SAMPLE)["input_ids"], skip_special_tokens=True) == SAMPLE


def test_marks_param_and_marks_in_the_corpus(tmp_path: Path) -> None:
    marks = {"token": "|", "space": "_"}
    path = write_lines(tmp_path / "c.txt", ["Hello there, world", "the world"] * 20)
    spec = TrainSpec(30, params={"marks": marks}, label="x")
    tokenizer = adapter_class("sp_bpe_hftpretok").train(path, spec)
    assert any("|" in piece for piece in tokenizer.vocab)
    assert tokenizer.decode(tokenizer.encode("Hello world")) == "Hello world"
    bad = write_lines(tmp_path / "bad.txt", ["fine", "a|b"])
    with pytest.raises(TokstudyError, match=r"bad.txt:2: contains U\+007C"):
        adapter_class("sp_bpe_hftpretok").train(bad, spec)
    with pytest.raises(TokstudyError, match=r"sp_unigram_hftpretok \(x\): vocabulary size 90"):
        adapter_class("sp_unigram_hftpretok").train(path, replace(spec, vocab_size=90))
