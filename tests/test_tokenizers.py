"""Every registered adapter honours the common interface."""

from __future__ import annotations

import filecmp
import unicodedata
from functools import cache
from pathlib import Path

import pytest
from conftest import write_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstudy.corpora.prepare import CleaningStats, clean_lines
from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import CLS, SEP, SPECIAL_TOKENS, Tokenizer, TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.directory import read_meta
from tokstudy.tokenizers.registry import adapter_class, adapter_names, load_tokenizer
from tokstudy.workflow.corpora.plan import chatterbot_files

#: a size each adapter reaches on the English test corpus (byte-level ones need ≥ 256 + x)
SIZES = {"bbpe": 700}
DEFAULT_SIZE = 400
SAMPLE = "Hello there, how are you doing today? I am fine."


#: parameters an adapter cannot train without (a parity-aware tokenizer needs its balance),
#: or that keep its training short (Morfessor's 2 epochs: 2 s instead of 15; the interface
#: is the same)
PARAMS: dict[str, dict] = {"parity_bpe": {"ratio": {"en": 1.0}}, "morfessor": {"max_epochs": 2}}


def spec_for(name: str, **changes: object) -> TrainSpec:
    size = SIZES.get(name, DEFAULT_SIZE) if adapter_class(name).sized else None
    return TrainSpec(
        **{
            "vocab_size": size,
            "params": PARAMS.get(name, {}),
            "seed": 7,
            "threads": 1,
            "label": "en",
            **changes,
        }
    )


@cache
def corpus() -> Path:
    import tempfile

    lines = list(clean_lines(chatterbot_files("english"), "en", "error", CleaningStats()))
    return write_lines(Path(tempfile.mkdtemp(prefix="tokstudy-test-")) / "en.txt", lines[:3000])


@cache
def trained(name: str) -> Tokenizer:
    return adapter_class(name).train(corpus(), spec_for(name))


@cache
def alphabet() -> str:
    text = corpus().read_text(encoding="utf-8")
    return "".join(
        sorted({c for c in text if c.isalnum() and unicodedata.normalize("NFKC", c) == c})
    )


@pytest.mark.parametrize("name", adapter_names())
def test_vocabulary_has_requested_size_and_special_tokens(name: str) -> None:
    tokenizer = trained(name)
    spec = spec_for(name)
    if spec.vocab_size is not None:
        assert len(tokenizer.vocab) == spec.vocab_size
    assert set(SPECIAL_TOKENS) <= set(tokenizer.vocab)
    assert len(set(tokenizer.vocab)) == len(tokenizer.vocab)


@pytest.mark.parametrize("name", adapter_names())
def test_save_load_and_transformers_wrapper_encode_alike(name: str, tmp_path: Path) -> None:
    directory = tmp_path / name
    train_to_directory(name, corpus(), spec_for(name), directory)
    loaded = load_tokenizer(directory)
    original = trained(name)
    assert loaded.vocab == original.vocab
    assert loaded.encode_batch([SAMPLE, "x"]) == original.encode_batch([SAMPLE, "x"])
    wrapped = original.to_transformers()
    ids = wrapped(SAMPLE)["input_ids"]
    assert ids[0] == wrapped.convert_tokens_to_ids(CLS) and ids[
        -1
    ] == wrapped.convert_tokens_to_ids(SEP)
    assert ids[1:-1] == original.encode(SAMPLE)
    assert wrapped.mask_token == "[MASK]" and wrapped.pad_token == "[PAD]"
    training = original.to_training_transformers()
    draws = {tuple(training(SAMPLE)["input_ids"]) for _ in range(30)}
    if adapter_class(name).sampling:  # sampled segmentations of the same text
        assert all(original.decode(draw[1:-1]) == original.decode(ids[1:-1]) for draw in draws)
        assert len(draws) > 1
    else:
        assert draws == {tuple(ids)}


@pytest.mark.parametrize("name", [n for n in adapter_names() if adapter_class(n).deterministic])
def test_training_is_deterministic(name: str, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    train_to_directory(name, corpus(), spec_for(name), first)
    train_to_directory(name, corpus(), spec_for(name), second)
    comparison = filecmp.dircmp(first, second)
    assert sorted(comparison.left_list) == sorted(comparison.right_list)
    _, mismatch, errors = filecmp.cmpfiles(first, second, comparison.common_files, shallow=False)
    assert not mismatch and not errors


words = st.text(alphabet=st.sampled_from(alphabet()), min_size=1, max_size=12)
sentences = st.lists(words, min_size=1, max_size=8).map(" ".join)


@pytest.mark.parametrize("name", [n for n in adapter_names() if adapter_class(n).lossless])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=sentences)
def test_lossless_adapters_round_trip(name: str, text: str) -> None:
    tokenizer = trained(name)
    assert tokenizer.decode(tokenizer.encode(text)) == text


@pytest.mark.parametrize("name", [n for n in adapter_names() if adapter_class(n).sized])
def test_size_below_alphabet_is_a_clear_error(name: str) -> None:
    with pytest.raises(VocabSizeError, match=r"\(en\).*vocabulary size 20\b"):
        adapter_class(name).train(corpus(), spec_for(name, vocab_size=20))


@pytest.mark.parametrize("name", ["sp_bpe", "hf_bpe"])
def test_adjust_policy_keeps_a_reachable_size(name: str) -> None:
    tokenizer = adapter_class(name).train(
        corpus(), spec_for(name, vocab_size=20, size_policy="adjust")
    )
    assert len(tokenizer.vocab) > 20


def test_meta_records_how_the_library_samples_its_training_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # SentencePiece draws input_sentence_size lines (shuffled) when the corpus has more
    lines = corpus().read_text(encoding="utf-8").count("\n")
    default = train_to_directory("sp_bpe", corpus(), TrainSpec(200), tmp_path / "default")
    meta = read_meta(tmp_path / "default")
    assert meta["training_sample"] == {
        "input_sentence_size": 2_000_000,
        "shuffle_input_sentence": True,
    }
    spec = TrainSpec(200, {"input_sentence_size": lines // 2})
    sampled = train_to_directory("sp_bpe", corpus(), spec, tmp_path / "sampled")
    assert read_meta(tmp_path / "sampled")["training_sample"]["input_sentence_size"] == lines // 2
    assert f"a seeded random sample of {lines // 2} of the {lines} lines" in caplog.text
    assert sampled.vocab != default.vocab  # trained on half the lines
    train_to_directory("hf_bpe", corpus(), TrainSpec(200), tmp_path / "hf")
    assert "training_sample" not in read_meta(tmp_path / "hf")  # the HF trainers read all


def test_unknown_tokenizer_name_lists_valid_choices() -> None:
    with pytest.raises(TokstudyError, match=r"unknown tokenizer 'bpe'; valid choices: .*sp_bpe"):
        adapter_class("bpe")


def test_char_tokenizer_maps_unseen_characters_to_unk(tmp_path: Path) -> None:
    corpus_path = write_lines(tmp_path / "c.txt", ["abc ab", "ab"])
    tokenizer = adapter_class("char").train(corpus_path, TrainSpec(None, {"min_count": 2}))
    assert tokenizer.tokenize("abcz") == ["a", "b", "[UNK]", "[UNK]"]
    with pytest.raises(TokstudyError, match="unknown parameter"):
        adapter_class("char").train(corpus_path, TrainSpec(None, {"min_cout": 2}))
