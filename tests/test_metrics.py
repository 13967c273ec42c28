"""Metric definitions on small hand-computed cases."""

from __future__ import annotations

import functools
import logging
import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, pre_tokenizers

from tokstudy.errors import TokstudyError
from tokstudy.metrics.compute import (
    BATCH_COUNTS,
    METRICS,
    PASS_COUNTS,
    Metric,
    check_metric_names,
    compute_metrics,
    f95,
    nu,
    ratio,
    renyi_efficiency,
    tokens_per_word,
)
from tokstudy.runtime import progress
from tokstudy.tokenizers.adapters.bytelevel import HFByteLevelBPE
from tokstudy.tokenizers.base import SPECIAL_TOKENS, Encoded, Tokenizer, TokenStarts, TrainSpec
from tokstudy.tokenizers.pretrained import PretrainedHF
from tokstudy.tokenizers.registry import adapter_class
from tokstudy.tokenizers.word_marks import metaspace_starts, opens_word
from tokstudy.tokenizers.words import batch_words
from tokstudy.workflow.plan import StudyPlan
from tokstudy.workflow.study.core import Study


def test_f95_takes_the_frequency_at_index_floor_095_n() -> None:
    # 20 occurring items with frequencies 20..1: index floor(0.95 * 20) = 19 -> frequency 1
    assert f95(np.arange(1, 21)) == 1
    # 10 items 10..1 plus unused ones: index floor(9.5) = 9 -> frequency 1
    assert f95(np.array([0, 0, *range(1, 11)])) == 1
    # 40 items: 20 of frequency 5 and 20 of frequency 3 -> index 38 -> 3
    assert f95(np.array([5] * 20 + [3] * 20)) == 3
    assert f95(np.array([7, 0, 0])) == 7
    # 21 items 21..1: 0.95 * 21 = 19.95, floor 19 -> frequency 2 (ceil or round: 20 -> 1)
    assert f95(np.arange(1, 22)) == 2
    assert math.isnan(f95(np.zeros(4)))


def test_nu_is_rank_weighted_average() -> None:
    # ranked frequencies 6, 3, 1: (1*6 + 2*3 + 3*1) / (1 + 2 + 3) = 15 / 6
    assert nu(np.array([1, 0, 6, 3])) == pytest.approx(2.5)
    assert math.isnan(nu(np.zeros(3)))


def test_renyi_efficiency_matches_formula() -> None:
    # the smallest vocabulary with a defined efficiency: 2 (log 1 = 0)
    assert renyi_efficiency(np.array([3, 3]), 2) == pytest.approx(1.0)
    assert math.isnan(renyi_efficiency(np.array([3]), 1))
    # uniform over 4 occurring of 4 items: H_a = log 4 for every a -> efficiency 1
    assert renyi_efficiency(np.array([5, 5, 5, 5]), 4) == pytest.approx(1.0)
    # p = (0.5, 0.25, 0.25), |V| = 8, a = 2.5
    p = np.array([0.5, 0.25, 0.25])
    expected = math.log((p**2.5).sum()) / (1 - 2.5) / math.log(8)
    assert renyi_efficiency(np.array([2, 1, 1, 0]), 8) == pytest.approx(expected)


def _word_level(vocab: list[str]) -> PretrainedHF:
    tokenizer = HFTokenizer(
        models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens([t for t in SPECIAL_TOKENS if t != "[UNK]" and t in vocab])
    return PretrainedHF(tokenizer)


def _wordpiece(vocab: list[str]) -> PretrainedHF:
    tokenizer = HFTokenizer(
        models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.add_special_tokens([t for t in SPECIAL_TOKENS if t != "[UNK]"])
    return PretrainedHF(tokenizer)


def test_compute_metrics_on_a_hand_checked_corpus(tmp_path: Path) -> None:
    # WordPiece, greedy longest match per whitespace word; a word it cannot spell is [UNK].
    # ids: 0 [UNK], 1-4 [PAD] [CLS] [SEP] [MASK] (control), 5 ab, 6 ##c, 7 é, 8 ##é, 9 日,
    # 10 ##本, 11 q (never used): |V| = 12, of which 12 - 4 = 8 can stand for text
    tokenizer = _wordpiece([*SPECIAL_TOKENS, "ab", "##c", "é", "##é", "日", "##本", "q"])
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc 日本\nab zz é\nabcé\n\n", encoding="utf-8")
    #   "abc 日本"  -> ab ##c | 日 ##本      4 tokens, 2 words, 6 chars, 3+1+6 = 10 bytes
    #   "ab zz é"   -> ab | [UNK] | é        3 tokens, 3 words, 7 chars, 6+2 = 8 bytes
    #   "abcé"      -> ab ##c ##é            3 tokens, 1 word,  4 chars, 3+2 = 5 bytes
    #   ""          -> nothing               0 tokens, 0 words
    metrics, counts = compute_metrics(tokenizer, corpus, batch_lines=2)
    assert counts.dtype == np.int64 and counts.tolist() == [1, 0, 0, 0, 0, 3, 2, 1, 1, 1, 1, 0]
    assert metrics["lines"] == 4 and metrics["words"] == 6 and metrics["tokens"] == 10
    assert metrics["vocab_size"] == 12
    assert metrics["mu"] == pytest.approx(10 / 4)
    assert metrics["fertility"] == pytest.approx(10 / 6)
    # words of two or more tokens: abc, 日本, abcé
    assert metrics["continued_words"] == pytest.approx(3 / 6)
    # per token, not per word: 1 [UNK] of 10 tokens; 6 + 7 + 4 = 17 chars; 23 bytes
    assert metrics["unk_rate"] == pytest.approx(1 / 10)
    assert metrics["chars_per_token"] == pytest.approx(17 / 10)
    assert metrics["bytes_per_token"] == pytest.approx(23 / 10)
    # occurring: [UNK] ab ##c é ##é 日 ##本 = 7 of the 8 text ids (q unused)
    assert metrics["vocab_used"] == pytest.approx(7 / 8)
    # ranked frequencies 3, 2, 1, 1, 1, 1, 1 (n = 7): f95 at index floor(6.65) = 6 -> 1
    assert metrics["f95"] == 1
    # nu = (1*3 + 2*2 + (3+4+5+6+7)*1) / (1+...+7) = 32 / 28
    assert metrics["nu"] == pytest.approx(32 / 28)
    # Rényi (a = 2.5) of p = (3, 2, 1, 1, 1, 1, 1) / 10 over log of the tokenizer's |V| = 12
    # (not the 7 occurring ids, nor the 8 text ids):
    # sum p^a = (3^2.5 + 2^2.5 + 5) / 10^2.5 = 26.2453 / 316.2278 = 0.0829950;
    # H = ln(0.0829950) / (1 - 2.5) = 1.659317; H / ln 12 = 1.659317 / 2.484907 = 0.667758
    assert metrics["renyi_efficiency"] == pytest.approx(0.667758, abs=1e-6)
    assert set(metrics) == set(METRICS)


def test_a_tokenizer_without_unknown_token_has_no_unknowns(tmp_path: Path) -> None:
    # a character BPE without an unknown token drops "c": its unk_rate is 0, not NaN, and
    # the last word gets no token but still counts as a word
    tokenizer = HFTokenizer(models.BPE({"a": 0, "b": 1}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    adapter = PretrainedHF(tokenizer)
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab a c\n", encoding="utf-8")
    assert adapter.unk_id is None
    metrics, _ = compute_metrics(adapter, corpus)
    assert metrics["tokens"] == 3 and metrics["unk_rate"] == 0.0
    # tokens per word 2, 1, 0
    assert metrics["words"] == 3 and metrics["fertility"] == pytest.approx(3 / 3)
    assert metrics["continued_words"] == pytest.approx(1 / 3)


@pytest.mark.filterwarnings("error")
def test_a_corpus_of_empty_lines_has_undefined_ratios(tmp_path: Path) -> None:
    # no token and no word: every ratio is NaN (no division by zero, no numpy warning)
    tokenizer = _wordpiece([*SPECIAL_TOKENS, "ab"])
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n\n", encoding="utf-8")
    metrics, _ = compute_metrics(tokenizer, corpus)
    assert (metrics["lines"], metrics["words"], metrics["tokens"]) == (2, 0, 0)
    assert metrics["mu"] == 0.0 and metrics["vocab_used"] == 0.0
    undefined = ["f95", "nu", "fertility", "continued_words", "unk_rate", "chars_per_token"]
    undefined += ["bytes_per_token", "renyi_efficiency"]
    assert all(math.isnan(metrics[name]) for name in undefined)


def test_progress_is_logged_with_lines_rate_and_time_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a line at every batch
    tokenizer = _wordpiece([*SPECIAL_TOKENS, "ab"])
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab ab\n" * 45, encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="tokstudy.metrics.compute"):
        compute_metrics(tokenizer, corpus, batch_lines=20)
    lines = [r.getMessage() for r in caplog.records]
    done = [
        re.match(r"scoring c\.txt: +(\d+)% (\d+)/45 \[[\d:]+<[\d:?]+, +.*line/s\]", m)
        for m in lines
    ]
    assert all(done), lines
    assert [int(m.group(2)) for m in done][:4] == [0, 20, 40, 45]


def test_tokens_per_word_of_known_words_counts_words_without_tokens() -> None:
    # adapters that know each token's word: "ab c" with both tokens in "ab", none in "c"
    lines = ["ab c"]
    batch = TokenStarts(
        np.array([5, 6]), np.array([0, 1]), np.array([2]), batch_words(lines), np.array([0, 0])
    )
    assert tokens_per_word(lines, batch).tolist() == [2, 0]


def test_continued_words_counts_running_words(tmp_path: Path) -> None:
    tokenizer = _word_level([*SPECIAL_TOKENS, "a", "b"])
    tokenizer._tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split("", behavior="isolated")]
    )
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab a ab\n", encoding="utf-8")
    metrics, _ = compute_metrics(tokenizer, corpus)
    # words: ab (2 tokens) twice, a (1 token) once
    assert metrics["fertility"] == pytest.approx(5 / 3)
    assert metrics["continued_words"] == pytest.approx(2 / 3)


def test_a_token_starting_in_whitespace_counts_for_the_next_word(tmp_path: Path) -> None:
    # every character is a token, the spaces too ([UNK]): " a" and " ab" are 2 and 3 tokens
    tokenizer = _word_level([*SPECIAL_TOKENS, "a", "b"])
    tokenizer._tokenizer.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    corpus = tmp_path / "c.txt"
    corpus.write_text("ab a ab\n\n", encoding="utf-8")
    metrics, _ = compute_metrics(tokenizer, corpus)
    assert metrics["words"] == 3 and metrics["tokens"] == 7
    assert metrics["fertility"] == pytest.approx(7 / 3)
    assert metrics["continued_words"] == pytest.approx(1.0)


def _per_word(lines: list[str], offsets: list[list[tuple[int, int]]]) -> list[int]:
    encoded = [Encoded([0] * len(spans), spans) for spans in offsets]
    return tokens_per_word(lines, TokenStarts.from_encoded(encoded)).tolist()


def test_tokens_per_word_follows_token_starts() -> None:
    line = "said  the man"
    # tokens: "said", "  the" (starts in whitespace), "m", "an", trailing (after the end)
    offsets = [(0, 4), (4, 9), (10, 11), (11, 13), (13, 13)]
    assert _per_word([line], [offsets]) == [1, 1, 3]
    assert _per_word(["   "], [[(0, 3)]]) == []


def test_tokens_per_word_keeps_the_lines_of_a_batch_apart() -> None:
    # a line without words (its token is not counted) and a token after a line's last word
    lines = ["ab c", "  ", "", "\u3000d\te "]
    offsets = [[(0, 1), (1, 2), (2, 4), (4, 4)], [(0, 2)], [], [(0, 2), (2, 4), (4, 5)]]
    assert _per_word(lines, offsets) == [2, 2, 1, 2]


@given(st.lists(st.text(alphabet="ab \t\u3000\u200bé", max_size=8), min_size=1, max_size=6))
def test_tokens_per_word_of_a_batch_is_that_of_its_lines(lines: list[str]) -> None:
    # one token per character: each word gets its characters plus the whitespace before it
    offsets = [[(k, k + 1) for k in range(len(line))] for line in lines]
    batch = _per_word(lines, offsets)
    alone = [
        n for line, spans in zip(lines, offsets, strict=True) for n in _per_word([line], [spans])
    ]
    assert batch == alone
    assert len(batch) == sum(len(line.split()) for line in lines)
    assert sum(batch) == sum(len(line) for line in lines if line.split())


def _bytelevel_bpe(tmp_path: Path) -> HFByteLevelBPE:
    corpus = tmp_path / "train.txt"
    corpus.write_text(
        "the man said that he said it\nshe said the word\nwe said so\n" * 20, encoding="utf-8"
    )
    return HFByteLevelBPE.train(corpus, TrainSpec(300, size_policy="adjust"))


def test_bytelevel_fertility_is_that_of_the_running_text(tmp_path: Path) -> None:
    # regression: words were encoded alone, so "said" lost its leading-space token "Ġsaid"
    tokenizer = _bytelevel_bpe(tmp_path)
    corpus = tmp_path / "eval.txt"
    text = ["the man said it", "she said so", "we said that"]
    corpus.write_text("\n".join(text) + "\n", encoding="utf-8")
    metrics, _ = compute_metrics(tokenizer, corpus)
    in_context = sum(len(ids) for ids in tokenizer.encode_batch(text))
    words = sum(len(line.split()) for line in text)
    assert metrics["tokens"] == in_context
    assert metrics["fertility"] == pytest.approx(in_context / words)
    alone = sum(len(tokenizer.encode(word)) for line in text for word in line.split())
    assert alone > in_context  # the old definition gave a different (inflated) figure


@functools.cache
def _trained(name: str) -> Tokenizer:
    """A tiny tokenizer of each offsets implementation (HF, SentencePiece, BBPE)."""
    folder = Path(tempfile.mkdtemp(prefix="tokstudy-offsets-"))
    corpus = folder / "train.txt"
    corpus.write_text("abba baba ésß 日本 ab, ba.\n" * 30, encoding="utf-8")
    return adapter_class(name).train(
        corpus, TrainSpec(40 if name == "sp_unigram" else 600, size_policy="adjust")
    )


@given(
    name=st.sampled_from(["sp_unigram", "bbpe", "hf_bytelevel_bpe", "hf_bpe", "hf_unigram"]),
    words=st.lists(st.text(alphabet="abés日本,.", min_size=1, max_size=6), min_size=1, max_size=5),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_library_offsets_count_words_like_the_generic_fallback(name: str, words: list[str]) -> None:
    # on lossless text, the adapter's offsets and the prefix-decoding fallback agree per word
    tokenizer = _trained(name)
    line = " ".join(words)
    lines = [line, "", line[::-1]]
    library = tokenizer.encode_batch_starts(lines)
    generic = TokenStarts.from_encoded(Tokenizer.encode_batch_with_offsets(tokenizer, lines))
    expected = [i for text in lines for i in tokenizer.encode(text)]
    assert library.ids.tolist() == generic.ids.tolist() == expected
    assert library.lengths.tolist() == generic.lengths.tolist()
    # the word-mark adapters hand over each token's word, which the counts then use
    assert (library.word is not None) == (name in {"sp_unigram", "hf_bpe", "hf_unigram"})
    per_word = tokens_per_word(lines, library)
    assert per_word.tolist() == tokens_per_word(lines, generic).tolist()
    assert per_word.sum() == len(library.ids)


def test_unknown_metric_name_is_one_line_error() -> None:
    with pytest.raises(TokstudyError) as error:
        check_metric_names(["f95", "mu2", "fertilty"])
    assert str(error.value) == f"unknown metric(s) fertilty, mu2; valid: {', '.join(METRICS)}"
    assert ", ".join(METRICS).startswith("f95, mu, nu, fertility, ")


def test_every_metric_reads_registered_counts() -> None:
    known = set(BATCH_COUNTS) | set(PASS_COUNTS)
    assert {name: m.counts for name, m in METRICS.items() if not set(m.counts) <= known} == {}


def test_a_metric_with_a_new_count_is_added_through_the_registries_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(BATCH_COUNTS, "spaces", lambda batch: batch.text.count(" "))
    monkeypatch.setitem(METRICS, "spaces_per_word", Metric(ratio, ("spaces", "words")))
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b a\nc d\nä\n", encoding="utf-8")
    metrics, _ = compute_metrics(_word_level([*SPECIAL_TOKENS, "a"]), corpus, batch_lines=2)
    assert list(metrics) == list(METRICS)
    assert metrics["spaces_per_word"] == pytest.approx((2 + 1 + 0) / 6)
    check_metric_names(["spaces_per_word", "mu"])
    config = {
        "languages": {"xx": {"path": str(corpus)}},
        "tokenizers": {"char": {}},
        "metrics": ["spaces_per_word"],
    }
    assert StudyPlan(Study(config, tmp_path)).metrics.names == ["spaces_per_word"]


def test_empty_corpus_is_an_error(tmp_path: Path) -> None:
    corpus = tmp_path / "empty.txt"
    corpus.write_text("", encoding="utf-8")
    with pytest.raises(TokstudyError, match="no lines"):
        compute_metrics(_word_level(list(SPECIAL_TOKENS)), corpus)


def test_sentencepiece_starts_follow_word_marks_through_normalisation() -> None:
    # NFKC drops the zero-width spaces, so decoded prefixes drift; the ▁ marks do not
    pieces = ["▁of", "▁chang", "ing", "▁", "h", "ours", "▁a"]
    opens_word = np.array([piece.startswith("▁") for piece in pieces])
    lines = ["of \u200b\u200bchanging hours", "a b", "   "]
    batch, unmatched = metaspace_starts(lines, [[0, 1, 2, 3, 4, 5], [6], []], opens_word)
    assert batch.starts[:6].tolist() == [0, 3, 3, 14, 14, 14]
    assert unmatched.tolist() == [1]  # its pieces mark fewer words: the caller falls back
    assert tokens_per_word(
        lines[:1], TokenStarts(batch.ids[:6], batch.starts[:6], batch.lengths[:1])
    ).tolist() == [1, 2, 3]


@pytest.mark.parametrize("name", ["sp_unigram", "hf_bpe", "hf_unigram", "bbpe"])
def test_batches_encoded_ahead_equal_the_batches_one_by_one(name: str) -> None:
    # the word-mark adapters encode the next batch on a worker thread; the first and the
    # last batch have a line whose normalised text has another word count ("¨" is NFKC
    # " ̈"): the fallback
    tokenizer = _trained(name)
    batches = [["abba baba", "ab a\u00a8b"], ["ab, ba."], ["日本 abba", "", "ab a\u00a8b ba"]]
    streamed = list(tokenizer.encode_batches_starts(iter(batches)))
    assert [lines for lines, _ in streamed] == batches
    for lines, ahead in streamed:
        one = tokenizer.encode_batch_starts(lines)
        assert ahead.ids.tolist() == one.ids.tolist()
        assert ahead.starts.tolist() == one.starts.tolist()
        assert ahead.lengths.tolist() == one.lengths.tolist()
        assert (ahead.word is None) == (one.word is None)
        assert tokens_per_word(lines, ahead).tolist() == tokens_per_word(lines, one).tolist()
    if name == "sp_unigram":
        for lines, unmatched in ((batches[0], [1]), (batches[-1], [2])):
            ids = tokenizer.encode_batch(lines)
            assert metaspace_starts(lines, ids, tokenizer._opens_word)[1].tolist() == unmatched


def test_opens_word_marks_the_pieces_that_start_with_the_metaspace() -> None:
    marks = opens_word(["▁the", "re", "▁", "a▁", "<unk>"])
    assert marks.dtype == bool and marks.tolist() == [True, False, True, False, False]
