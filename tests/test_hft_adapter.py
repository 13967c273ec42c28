"""The ``hft`` adapter and its ``transformers`` tokenizer."""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

import hft_oracle as oracle
import pytest
from conftest import hft_lines, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.adapters.hft import HFT
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, Tokenizer, TrainSpec
from tokstudy.tokenizers.hft.pretokenize import Marks
from tokstudy.tokenizers.hft.transformers_tokenizer import HFTTransformersTokenizer
from tokstudy.tokenizers.hft.vocab import HFTVocab
from tokstudy.tokenizers.registry import adapter_class

pytestmark = pytest.mark.shared


SIZE = 600


@cache
def corpus() -> Path:
    import tempfile

    lines = hft_lines("en", 1500)
    return write_lines(Path(tempfile.mkdtemp(prefix="tokstudy-hft-")) / "en.txt", lines)


@cache
def trained() -> HFT:
    return HFT.train(corpus(), TrainSpec(SIZE, label="en"))


def corpus_text() -> str:
    return corpus().read_text(encoding="utf-8")


def test_registered_and_sized() -> None:
    assert adapter_class("hft") is HFT
    tokenizer = trained()
    assert len(tokenizer.vocab) == SIZE
    assert tokenizer.vocab[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)
    lines = corpus_text().splitlines()
    marked = "".join(p for line in lines for p in tokenizer.pretokenizer.pretokenize(line))
    assert set(marked) <= set(tokenizer.vocab)


def test_encoding_matches_the_oracle_and_round_trips() -> None:
    tokenizer = trained()
    vocab = tokenizer.hft_vocab
    freq = dict(zip(vocab.tokens, vocab.freqs, strict=True))
    lines = [*corpus_text().splitlines()[:300], "Ünseen ☃ chars", ""]
    encoded = tokenizer.encode_batch(lines)
    for line, ids in zip(lines, encoded, strict=True):
        expected = oracle.encode(line, tokenizer.pretokenizer, list(vocab.tokens), freq)
        assert ids == [0 if i < 0 else i + len(SPECIAL_TOKENS) for i in expected]
    assert [tokenizer.decode(ids) for ids in encoded[:-2]] == lines[:-2]
    assert tokenizer.tokenize("☃") == [UNK]
    assert tokenizer.decode(tokenizer.encode("a☃b")) == "a\ufffdb"


MARK_CHARS = "".join(Marks().as_dict().values())
tricky = st.sampled_from(list("aZ1٣२ा,.-/_ \t\n\u00a0\u200d"))
any_text = st.text(st.one_of(st.characters(blacklist_characters=MARK_CHARS), tricky))


@settings(max_examples=150, deadline=None)
@given(st.lists(any_text, max_size=6))
def test_batch_encoding_matches_the_oracle_on_any_text(lines: list[str]) -> None:
    tokenizer = trained()
    vocab = tokenizer.hft_vocab
    freq = dict(zip(vocab.tokens, vocab.freqs, strict=True))
    expected = [
        [0 if i < 0 else i + len(SPECIAL_TOKENS) for i in ids]
        for ids in (
            oracle.encode(x, tokenizer.pretokenizer, list(vocab.tokens), freq) for x in lines
        )
    ]
    assert tokenizer.encode_batch(lines) == expected
    assert [tokenizer.encode(line) for line in lines] == expected


cased = st.text(st.sampled_from(list("aBCdé ÉÆ\ufffd☃,. \t\xa0")), max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(any_text, cased), max_size=6))
def test_token_starts_equal_the_generic_decoded_prefix_starts(lines: list[str]) -> None:
    tokenizer = trained()
    fast = tokenizer.encode_batch_starts(lines)
    generic = Tokenizer.encode_batch_starts(tokenizer, lines)
    assert fast.ids.tolist() == generic.ids.tolist()
    assert fast.lengths.tolist() == generic.lengths.tolist()
    assert fast.starts.tolist() == generic.starts.tolist()


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from([*sorted(set(corpus_text()) - {"\n"}), " ", "\t", "\xa0"])))
def test_text_of_seen_characters_round_trips(text: str) -> None:
    assert trained().decode(trained().encode(text)) == text


def test_save_load_and_training_frequencies_file(tmp_path: Path) -> None:
    tokenizer = trained()
    tokenizer.save(tmp_path)
    rows = (tmp_path / "hft_vocab.tsv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == SIZE - len(SPECIAL_TOKENS)
    assert rows[0] == f"{tokenizer.vocab[5]}\t{tokenizer.hft_vocab.freqs[0]}"
    assert HFTVocab.read_tsv(tmp_path / "hft_vocab.tsv") == tokenizer.hft_vocab
    loaded = HFT.load(tmp_path)
    sample = ["Hello there, General Kenobi!", "2,56,278 cases"]
    assert loaded.vocab == tokenizer.vocab
    assert loaded.encode_batch(sample) == tokenizer.encode_batch(sample)


def test_training_twice_writes_identical_files(tmp_path: Path) -> None:
    spec = TrainSpec(SIZE, label="en")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        HFT.train(corpus(), spec).save(tmp_path / name)
    for name in ("hft_vocab.tsv", "hft_config.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_transformers_tokenizer_matches_and_reloads_offline(tmp_path: Path) -> None:
    tokenizer = trained()
    wrapped = tokenizer.to_transformers()
    text = "Mr. Thackeray said: 2,56,278 new cases  in MUMBAI ☃."
    ids = tokenizer.encode(text)
    assert wrapped.encode(text, add_special_tokens=False) == ids
    assert wrapped.decode(ids) == tokenizer.decode(ids)
    wrapped.save_pretrained(tmp_path)
    reloaded = HFTTransformersTokenizer.from_pretrained(tmp_path, local_files_only=True)
    batch = reloaded([text, "ok"], padding=True)
    assert batch["input_ids"][0] == [reloaded.cls_token_id, *ids, reloaded.sep_token_id]
    assert reloaded.decode(batch["input_ids"][0], skip_special_tokens=True) == text.replace("☃", "")
    assert reloaded.pad_token_id == 1 and reloaded.mask_token == "[MASK]"
    assert len(reloaded) == SIZE


def test_size_policy(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(VocabSizeError, match=r"hft \(en\): vocabulary size 50 cannot .* smallest"):
        HFT.train(corpus(), TrainSpec(50, label="en"))
    with caplog.at_level(logging.WARNING):
        adjusted = HFT.train(corpus(), TrainSpec(50, size_policy="adjust", label="en"))
    assert len(adjusted.vocab) > 50 and all(len(t) == 1 for t in adjusted.hft_vocab.tokens)
    assert "smallest reachable size" in caplog.text


def test_unreachable_size_on_a_single_character_corpus(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "a.txt", ["a aa aaa", "aaa"])
    with pytest.raises(VocabSizeError, match="largest reachable size"):
        HFT.train(path, TrainSpec(40, label="a"))
    adjusted = HFT.train(path, TrainSpec(40, size_policy="adjust", label="a"))
    assert adjusted.decode(adjusted.encode("aaa aa")) == "aaa aa"


@pytest.mark.parametrize(
    ("lines", "params", "message"),
    [
        ([], {}, "empty corpus"),
        (["ok \ue000 no"], {}, r"c.txt:1: contains U\+E000"),
        (["ok"], {"step": 3}, r"tokenizers\.hft\.params: unknown parameter .step."),
        (["ok"], {"step_fraction": "x"}, "step_fraction"),
        (["ok"], {"max_iterations": 0}, "max_iterations"),
    ],
)
def test_bad_input_is_a_clear_error(
    tmp_path: Path, lines: list[str], params: dict, message: str
) -> None:
    path = write_lines(tmp_path / "c.txt", lines)
    with pytest.raises(TokstudyError, match=message):
        HFT.train(path, TrainSpec(100, params=params))


def test_missing_corpus_and_mark_in_encoded_text(tmp_path: Path) -> None:
    with pytest.raises(TokstudyError, match="corpus file not found"):
        HFT.train(tmp_path / "nope.txt", TrainSpec(100))
    with pytest.raises(TokstudyError, match="line 2: contains"):
        trained().encode_batch(["fine", "bad \ue003"])


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        (("a", "ab"), r"entry 'ab' uses characters that are not entries: \['b'\]"),
        (("a", "a b", " "), "invalid entry 'a b'"),
        (("a", ""), "invalid entry ''"),
    ],
)
def test_vocabulary_rejects_bad_entries(tokens: tuple[str, ...], message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        HFTVocab(tokens, (1,) * len(tokens))
