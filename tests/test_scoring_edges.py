"""Edge cases of the downstream scores: classification scores, bits per byte and its
interval, MLM masking and pseudo-likelihood, BLEU and chrF of a translation run.

Each test was written for mutants that survived the other tests (docs/mutation.md): it
fails when a published number is computed another way. The oracles are hand counts,
sacreBLEU's public API, or brute force.
"""

from __future__ import annotations

import json
import logging
import math
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import torch
from conftest import logged
from hypothesis import given
from hypothesis import strategies as st
from sacrebleu.metrics.base import Metric
from tokenizers import processors
from transformers import BertConfig, BertForMaskedLM

from tokstudy.errors import TokstudyError
from tokstudy.models.classification_scores import (
    accuracy,
    bootstrap_ci,
    bootstrap_table,
    learned_or_not,
    macro_f1,
    majority_accuracy,
)
from tokstudy.models.clm.scoring import _training_facts, unigram_bits
from tokstudy.models.clm.stream import check_vocabulary, encode_lines
from tokstudy.models.clm.windows import window_plan
from tokstudy.models.fast_transformers_tokenizer import word_level
from tokstudy.models.heldout import (
    bits_per_byte_interval,
    decoder_for,
    lossy_bytes,
    roundtrip_share,
)
from tokstudy.models.masking import Masker, labelled, step_seed
from tokstudy.models.mlm_scoring import SCORE_COLUMNS, BertScorer, mlm_metrics, score_lines
from tokstudy.nmt.scoring import (
    detokenize,
    paired_bootstrap,
    score_run,
    sentence_bleu,
)
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory

# --- classification scores ----------------------------------------------------------------


@pytest.mark.parametrize("score", [accuracy, macro_f1])
def test_scores_of_no_items_are_nan_without_a_warning(score) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "mean of empty slice"
        assert math.isnan(score([], []))
        assert math.isnan(majority_accuracy([]))


def test_a_macro_f1_of_exactly_one_over_the_labels_is_collapsed() -> None:
    gold = [3, 0, 4, 2, 4, 1, 2, 0]
    pred = [2, 2, 4, 2, 2, 4, 2, 2]
    # F1 by label: 0, 1, 3 never predicted: 0; 2: tp 2, fp 4 → 4/8; 4: tp 1, fp 1, fn 1 → 2/4
    assert macro_f1(gold, pred) == pytest.approx((0.5 + 0.5) / 5)
    # accuracy 3/8 is 1/8 above the majority's 2/8: only the macro-F1 rule (≤ 1/5) applies
    assert learned_or_not(gold, pred, n_labels=5) == {"majority_accuracy": 0.25, "collapsed": 1.0}


def test_the_bootstrap_table_sorts_its_groups_and_passes_its_settings_on() -> None:
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 3, 60)
    pred = np.where(rng.random(60) < 0.7, gold, rng.integers(0, 3, 60))
    frame = pd.DataFrame({"system": np.repeat(["b", "a"], 30), "gold": gold, "pred": pred})
    table = bootstrap_table(frame, ["system"], n_resamples=50, seed=7)
    assert table["system"].tolist() == ["a", "a", "b", "b"]
    first = frame[frame["system"] == "a"]
    row = table.iloc[0]
    assert row["metric"] == "accuracy"
    assert row["value"] == np.mean(first["gold"].to_numpy() == first["pred"].to_numpy())
    expected = bootstrap_ci(first["gold"], first["pred"], "accuracy", n_resamples=50, seed=7)
    assert (row["ci_low"], row["ci_high"]) == expected
    assert expected != bootstrap_ci(first["gold"], first["pred"], "accuracy")


# --- bits per byte: the stream, its windows, its baseline and its interval --------------------


def _with_cls_sep(tokenizer):
    """``tokenizer`` that adds [CLS] … [SEP] unless told not to."""
    cls, sep = tokenizer.cls_token, tokenizer.sep_token
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        special_tokens=[(cls, tokenizer.cls_token_id), (sep, tokenizer.sep_token_id)],
    )
    return tokenizer


def test_lines_are_encoded_without_special_tokens() -> None:
    tokenizer = _with_cls_sep(word_level(["a", "b"]))
    assert len(tokenizer("a b")["input_ids"]) == 4  # the tokenizer would add two
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in ("a", "b")}
    assert encode_lines(tokenizer, ["a b", "b"]) == [[ids["a"], ids["b"]], [ids["b"]]]
    [encoded] = BertScorer(torch.nn.Identity(), tokenizer).encode(["a b"])
    assert encoded.targets.tolist() == [ids["a"], ids["b"]]


class GappedVocabulary:
    """A tokenizer of 3 tokens whose ids are 0, 1 and 5."""

    cls_token_id, sep_token_id = 0, 1

    def get_vocab(self) -> dict[str, int]:
        return {"[CLS]": 0, "[SEP]": 1, "a": 5}

    def __len__(self) -> int:
        return 3


def test_a_vocabulary_with_a_gap_in_its_ids_is_refused() -> None:
    message = (
        r"^cell/tok: the tokenizer has no decodable vocabulary "
        r"\(its 3 vocabulary ids are not 0\.\.2\)$"
    )
    with pytest.raises(TokstudyError, match=message):
        check_vocabulary(GappedVocabulary(), "cell/tok")


@pytest.mark.parametrize("stride", [0, 16])
def test_a_stride_outside_one_to_context_minus_one_is_refused(stride: int) -> None:
    with pytest.raises(ValueError, match=rf"^stride {stride} must lie in 1\.\.15$"):
        window_plan(100, 16, stride)


def test_the_unigram_baseline_smooths_over_the_whole_vocabulary() -> None:
    # training ids 0, 0, 1 of a vocabulary of 5 (ids 2-4 unseen): p(0) = 3/8, p(1) = 2/8
    expected = -(math.log2(3 / 8) + math.log2(2 / 8) + math.log2(1 / 8))
    counts = np.bincount([0, 0, 1], minlength=5)
    assert unigram_bits(counts, np.array([0, 1, 4])) == pytest.approx(expected)


def test_training_facts_of_a_run_without_throughput_and_of_a_broken_summary(tmp_path) -> None:
    config = {"preset": "tiny", "budget": "bytes", "validation_lines": 20}
    summary = {
        "parameters": 1,
        "non_embedding_parameters": 1,
        "epochs_done": 1,
        "steps": 2,
        "train_bytes": 3,
        "train_tokens": 4,
        "training_tokens": 5,
        "unique_training_tokens": 6,
        "tokens_per_parameter": 7.0,
        "train_flops": 8,
        "best_validation_loss": 9.0,
        "config": config,
    }
    path = tmp_path / "train.json"
    path.write_text(json.dumps(summary), encoding="utf-8")
    facts = _training_facts(path)
    assert facts["tokens_per_s"] is None and facts["mfu"] is None  # trained before the loop
    assert facts["steps"] == 2 and facts["preset"] == "tiny"
    del summary["steps"]
    path.write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(KeyError, match="steps"):
        _training_facts(path)


def test_the_interval_of_two_lines_exists_and_of_one_does_not() -> None:
    low, high = bits_per_byte_interval(
        np.array([10.0, 30.0]), np.array([10, 10]), resamples=200, seed=0
    )
    # the resampled ratios are those of 2 × line 1, one of each, 2 × line 2
    assert 10 / math.log(2) / 10 <= low < high <= 30 / math.log(2) / 10
    assert all(
        map(math.isnan, bits_per_byte_interval(np.array([1.0]), np.array([5]), resamples=9, seed=0))
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # one resample has no spread
def test_the_interval_is_the_percentile_one_with_its_resamples_and_seed() -> None:
    nats, n_bytes = np.array([3.0, 6.0, 9.0]), np.array([1, 2, 3])
    ratio = 3 / math.log(2)
    # every line has the same ratio: every resample has it too (BCa gives up on such data)
    assert bits_per_byte_interval(nats, n_bytes, resamples=50, seed=0) == pytest.approx(
        (ratio, ratio)
    )
    rng = np.random.default_rng(5)
    nats, n_bytes = rng.gamma(2.0, 10.0, 40), rng.integers(5, 50, 40)
    first = bits_per_byte_interval(nats, n_bytes, resamples=200, seed=1)
    assert bits_per_byte_interval(nats, n_bytes, resamples=200, seed=1) == first
    assert bits_per_byte_interval(nats, n_bytes, resamples=200, seed=2) != first
    low, high = bits_per_byte_interval(nats, n_bytes, resamples=1, seed=1)  # one resample
    assert low == high


def test_a_tokstudy_folder_decodes_with_its_adapter(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat\n", encoding="utf-8")
    adapter = train_to_directory("char", corpus, TrainSpec(None), tmp_path / "char")
    ids = adapter.encode_batch(["the cat"])[0]
    assert decoder_for(tmp_path / "char", tokenizer=None)(ids) == "the cat"


def test_a_transformers_tokenizer_decodes_without_cleaning_up_spaces(tmp_path: Path) -> None:
    tokenizer = word_level(["hello", "."])
    tokenizer.clean_up_tokenization_spaces = True  # what the scorer must not do
    ids = tokenizer.convert_tokens_to_ids(["hello", "."])
    assert tokenizer.decode(ids) == "hello."  # cleaned up
    assert decoder_for(tmp_path, tokenizer)(ids) == "hello ."


def test_the_roundtrip_share_needs_one_encoding_per_line() -> None:
    with pytest.raises(ValueError):
        roundtrip_share([[1], [2]], ["a"], lambda ids: "a")


# --- MLM masking ----------------------------------------------------------------------


def test_the_labelled_positions_by_boolean_mask() -> None:
    hidden = torch.arange(12.0).reshape(1, 6, 2)
    labels = torch.tensor([[-100, 5, 100, -100, -101, 7]])
    rows, chosen = labelled(hidden, labels)
    assert chosen.tolist() == [5, 100, -101, 7]
    assert rows.tolist() == [[2.0, 3.0], [4.0, 5.0], [8.0, 9.0], [10.0, 11.0]]


@given(st.integers(0, 2**32 - 1), st.integers(0, 10**9))
def test_step_seeds_are_63_bit(seed: int, step: int) -> None:
    assert 0 <= step_seed(seed, step) < 2**63


def test_step_seeds_use_the_63_bits() -> None:
    # a uniform 63-bit value is ≥ 2^62 with probability 1/2: at least one of 64 is
    assert max(step_seed(0, step) for step in range(64)) >= 2**62


def test_whole_word_masking_without_character_spans_is_refused() -> None:
    masker = Masker(word_level(["a"]), whole_word_mask=True)
    message = r"^whole-word masking needs the tokens' character spans$"
    with pytest.raises(ValueError, match=message):
        masker(torch.tensor([[5, 5]]), step=0)


# --- MLM pseudo-likelihood ------------------------------------------------------------


def test_mlm_metrics_by_hand_and_of_nothing() -> None:
    scores = pd.DataFrame(
        {"line": [0, 1], "units": [3, 5], "chars": [10, 6], "words": [2, 2], "unk": [1, 1]}
    ).assign(nll=[2.0, 4.0])
    metrics = mlm_metrics(scores)
    assert metrics == pytest.approx(
        {
            "lines": 2,
            "units": 8,
            "chars": 16,
            "words": 4,
            "nll": 6.0,
            "pseudo_perplexity": math.exp(6 / 8),
            "bits_per_char": 6 / math.log(2) / 16,
            "pll_per_word": -6 / 4,
            "unk_rate": 2 / 8,
        }
    )
    empty = mlm_metrics(pd.DataFrame(columns=list(SCORE_COLUMNS)))
    assert empty["lines"] == 0 and empty["units"] == 0
    for key in ("pseudo_perplexity", "bits_per_char", "pll_per_word", "unk_rate"):
        assert math.isnan(empty[key])


@pytest.fixture(scope="module")
def tiny_bert():
    tokenizer = word_level(list("abcdefgh"))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=8,
    )
    torch.manual_seed(0)
    return BertForMaskedLM(config).eval(), tokenizer


@pytest.mark.usefixtures("one_torch_thread")
def test_padding_and_batching_leave_each_lines_score_as_it_is(tiny_bert) -> None:
    model, tokenizer = tiny_bert
    lines = ["a b", "c d e f g h", "h"]
    together = score_lines(BertScorer(model, tokenizer, max_length=8), lines, batch_size=64)
    assert together["line"].tolist() == [0, 1, 2]
    for index, line in enumerate(lines):
        alone = score_lines(BertScorer(model, tokenizer, max_length=8), [line], batch_size=1)
        assert alone["nll"][0] == pytest.approx(together["nll"][index], rel=1e-5)


@pytest.mark.usefixtures("one_torch_thread")
def test_windows_fill_the_models_positions(tiny_bert) -> None:
    model, tokenizer = tiny_bert
    widths: list[int] = []
    hook = model.register_forward_pre_hook(
        lambda _, args, kwargs: widths.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    try:
        scores = score_lines(BertScorer(model, tokenizer, max_length=8), ["a b c d e f g h a b"])
    finally:
        hook.remove()
    # 10 units: windows of 6 and 4, framed by [CLS] and [SEP]: 8 positions at most
    assert max(widths) == 8 and scores["units"][0] == 10


# --- BLEU and chrF of a translation run -------------------------------------------------


def test_hypotheses_are_detokenized_to_one_line_each() -> None:
    tokenizer = SimpleNamespace(decode=lambda ids: "a\nb\rc")
    assert detokenize(tokenizer, [[1]]) == ["a b c"]


def test_sentence_bleu_is_sacrebleus_with_effective_order() -> None:
    hypotheses = ["the cat", "a dog barked at me"]
    references = ["the cat sat", "the dog barked"]
    expected = [
        sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hypotheses, references, strict=True)
    ]
    assert sentence_bleu(hypotheses, references).tolist() == pytest.approx(expected)
    assert expected[0] > 0  # no 3- or 4-gram in "the cat": only an effective order scores it


def test_bad_scoring_input_is_named() -> None:
    with pytest.raises(TokstudyError, match=r"^no references to score against$"):
        sentence_bleu([], [])
    message = r"^1 hypotheses for 2 references: translations and test set do not match$"
    with pytest.raises(TokstudyError, match=message):
        sentence_bleu(["a"], ["a", "b"])
    with pytest.raises(TokstudyError, match=r"^unknown metric 'ter'; valid: bleu, chrf$"):
        paired_bootstrap(["a", "b"], ["a", "b"], ["a", "b"], "ter")


def test_a_sacrebleu_without_its_statistics_method_is_named(monkeypatch) -> None:
    monkeypatch.delattr(Metric, "_extract_corpus_statistics")
    message = (
        rf"^sacreBLEU {re.escape(sacrebleu.__version__)} has no "
        r"BLEU\._extract_corpus_statistics, CHRF\._extract_corpus_statistics: the paired "
        r"bootstrap needs them; install a sacreBLEU that pyproject.toml supports$"
    )
    with pytest.raises(TokstudyError, match=message):
        paired_bootstrap(["a b", "c"], ["a b", "c"], ["a b", "c"], samples=10)


def test_the_paired_bootstrap_records_its_settings() -> None:
    lines = ["a b c d", "e f g h"]
    result = paired_bootstrap(lines, lines, lines, samples=20, seed=3)
    assert (result.metric, result.bootstrap_samples, result.bootstrap_seed) == ("bleu", 20, 3)


def test_a_runs_scores_against_sacrebleu_and_by_hand(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    references = ["the cat sat on the mat", "a dog barked", "hello world!"]
    hypotheses = ["the cat sat on a mat", "a dog barked", "hello there world"]
    split = tmp_path / "split"
    split.mkdir()
    (split / "test.en").write_text("x\ny\nz\n", encoding="utf-8")
    (split / "test.mr").write_text("\n".join(references) + "\n", encoding="utf-8")
    (tmp_path / "hyp.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\na dog barked\nhello there world\n", "utf-8")
    train_to_directory("char", corpus, TrainSpec(None), tmp_path / "char")  # no "!"
    out = tmp_path / "scores.json"
    with caplog.at_level(logging.INFO, logger="tokstudy.nmt.scoring"):
        result = score_run(
            tmp_path / "hyp.txt",
            split,
            "en-mr",
            tmp_path / "char",
            out,
            tokenizer="char",
            size="24",
            seed=1,
        )
    assert logged(caplog, "tokstudy.nmt.scoring") == [
        f"en-mr char (24) seed 1: BLEU {result['bleu']:.2f}, chrF {result['chrf']:.2f}"
    ]
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert result["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hypotheses, [references]).score)
    assert result["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hypotheses, [references]).score)
    assert result["bleu_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")

    def chars(line: str) -> str:  # the char tokenizer's tokens: ▁ for a space, [UNK] for "!"
        return " ".join({" ": "▁", "!": "[UNK]"}.get(c, c) for c in line)

    on_tokens = sacrebleu.corpus_bleu(
        [chars(h) for h in hypotheses], [[chars(r) for r in references]]
    )
    assert result["bleu_on_tokens"] == pytest.approx(on_tokens.score)
    assert result["reference_roundtrip_exact"] == pytest.approx(2 / 3)  # "!" is [UNK]
    assert {key: result[key] for key in ("direction", "tokenizer", "vocab_size", "seed")} == {
        "direction": "en-mr",
        "tokenizer": "char",
        "vocab_size": "24",  # the size label, as the wildcard gives it
        "seed": 1,
    }
    assert (result["split"], result["sentences"]) == ("test", 3)
    assert (result["sources"], result["references"], result["hypotheses"]) == (
        str(split / "test.en"),
        str(split / "test.mr"),
        str(tmp_path / "hyp.txt"),
    )


def test_lossy_bytes_counts_the_bytes_decoding_does_not_give_back_by_hand() -> None:
    # "héllo" decodes as "hello": é (2 bytes in UTF-8) comes back as e; the matching
    # blocks are "h" and "llo" (4 bytes), so 2 of its 6 bytes are lost; "abc" comes back
    # whole. Bytes divided by: 6 + 1 and 3 + 1 (each line's newline) = 11
    decoded = {1: "hello", 2: "abc"}
    share = lossy_bytes([[1], [2]], ["héllo", "abc"], lambda ids: decoded[ids[0]])
    assert share == pytest.approx(2 / 11)
    assert lossy_bytes([[2]], ["abc"], lambda ids: "abc") == 0.0
    # a tokenizer that forgets where the spaces were: "ab ab" comes back as "a b a b", all
    # of the line's 5 bytes are in it but 2 were inserted: 2 of 5 + 1
    assert lossy_bytes([[3]], ["ab ab"], lambda ids: "a b a b") == pytest.approx(2 / 6)


def test_a_run_is_lossy_above_the_tolerance_of_bytes_not_lines() -> None:
    from tokstudy.models.run_flags import FLAGS, LOSSY_TOLERANCE

    metric, test = FLAGS["lossy"]
    assert metric == "lossy_bytes" and LOSSY_TOLERANCE == 0.001
    # many lines may differ in a byte or two (a lowercasing tokenizer on names) and still
    # lose less than the tolerance; a tokenizer losing 0.5 % of the bytes is lossy
    assert not test(0.0009) and not test(LOSSY_TOLERANCE) and test(0.005)
