"""A fair held-out score: per-line sums, the bootstrap interval over lines, the round-trip
share that marks a normalising tokenizer lossy, and how much data a run had for its size."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import utf8_bytes
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from tokstudy.corpora.prepare import CleaningStats, normalize_line
from tokstudy.errors import TokstudyError
from tokstudy.models import heldout
from tokstudy.models.clm.scoring import bits_per_byte, unigram_log2_probs
from tokstudy.models.clm.stream import encode_lines, scored_stream
from tokstudy.models.clm.train import _check_data
from tokstudy.models.clm.windows import token_nll
from tokstudy.models.clm_scales import data_starved
from tokstudy.models.config import ClmConfig
from tokstudy.training.data_fit import data_facts

SPECIALS = ["[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]"]


@given(st.lists(st.integers(1, 5), min_size=1, max_size=20), st.data())
def test_per_line_sums_add_up_each_run(counts: list[int], data: st.DataObject) -> None:
    values = np.array(
        data.draw(st.lists(st.integers(-9, 9), min_size=sum(counts), max_size=sum(counts))),
        dtype=float,
    )
    sums = heldout.per_line_sums(values, counts)
    bounds = np.cumsum([0, *counts])
    assert sums.tolist() == [values[a:b].sum() for a, b in itertools.pairwise(bounds)]


def test_per_line_sums_refuse_counts_that_do_not_cover_the_values() -> None:
    with pytest.raises(ValueError, match="do not split"):
        heldout.per_line_sums(np.zeros(4), [2, 1])


def test_bits_per_byte_interval_of_lines_with_one_ratio_is_that_ratio() -> None:
    nats = np.array([2.0, 4.0, 6.0]) * math.log(2)  # 1 bit per byte on every line
    low, high = heldout.bits_per_byte_interval(nats, np.array([2, 4, 6]), resamples=200, seed=0)
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)


def test_bits_per_byte_interval_matches_a_brute_force_bootstrap() -> None:
    rng = np.random.default_rng(3)
    n_bytes = rng.integers(20, 80, size=60)
    nats = n_bytes * rng.uniform(0.5, 1.5, size=60)
    low, high = heldout.bits_per_byte_interval(nats, n_bytes, resamples=4000, seed=1)
    picks = np.random.default_rng(7).integers(0, 60, size=(20000, 60))
    ratios = nats[picks].sum(1) / math.log(2) / n_bytes[picks].sum(1)
    assert low == pytest.approx(np.quantile(ratios, 0.025), abs=0.01)
    assert high == pytest.approx(np.quantile(ratios, 0.975), abs=0.01)
    assert low < nats.sum() / math.log(2) / n_bytes.sum() < high


def test_one_line_has_no_interval() -> None:
    low, high = heldout.bits_per_byte_interval(
        np.array([3.0]), np.array([4]), resamples=100, seed=0
    )
    assert math.isnan(low) and math.isnan(high)


# --- like with like: a normalising tokenizer against a lossless one ----------------------

TRAIN = ["the cat sat.", "a dog ran 12 miles.", "the fish swam.", "it sat. The end."] * 5
#: held-out text with planted non-breaking spaces, full-width digits and a ligature
HELDOUT = ["the cat sat.\u00a0The dog ran \uff11\uff12 miles.", "the \ufb01sh swam.\u00a0The end."]


def char_tokenizer(nfkc: bool) -> PreTrainedTokenizerFast:
    """One token per character over every character of the raw and the NFKC text (the same
    vocabulary for both), decoding by concatenation; ``nfkc``: NFKC before splitting."""
    chars = sorted(
        set("".join(TRAIN + HELDOUT))
        | set(normalize_line("".join(HELDOUT), "nfkc", CleaningStats()))
    )
    vocab = {token: i for i, token in enumerate(SPECIALS + chars)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), "isolated")
    backend.decoder = decoders.Fuse()
    if nfkc:
        backend.normalizer = normalizers.NFKC()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


class UnigramModel(torch.nn.Module):
    """The same model quality for both tokenizers: the add-one unigram of the tokenizer's
    own training stream, at every position."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, lines: list[str]) -> None:
        super().__init__()
        train = scored_stream(encode_lines(tokenizer, lines), tokenizer.sep_token_id)
        log2p = unigram_log2_probs(np.bincount(train, minlength=len(tokenizer)))
        self.logits = torch.tensor(log2p * math.log(2), dtype=torch.float32)

    def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
        return SimpleNamespace(logits=self.logits.expand(*input_ids.shape, -1).clone())


def score(nfkc: bool, train: list[str], lines: list[str]) -> tuple[float, float]:
    """Bits per byte and round-trip share of ``lines`` (as the clm task scores them)."""
    tokenizer = char_tokenizer(nfkc)
    encoded = encode_lines(tokenizer, lines)
    stream = scored_stream(encoded, tokenizer.sep_token_id)
    nll = token_nll(UnigramModel(tokenizer, train), stream, context=64, stride=32)
    decode = heldout.decoder_for("no-such-folder", tokenizer)
    return (
        bits_per_byte(float(nll.sum()), utf8_bytes(lines)),
        heldout.roundtrip_share(encoded, lines, decode),
    )


def test_a_normalising_tokenizer_wins_on_raw_text_and_is_flagged_lossy() -> None:
    raw_nfkc, raw_nfkc_roundtrip = score(True, TRAIN, HELDOUT)
    raw_lossless, raw_lossless_roundtrip = score(False, TRAIN, HELDOUT)
    # the lossless model pays for the NBSPs and full-width digits it never saw in training
    assert raw_nfkc < raw_lossless
    assert raw_nfkc_roundtrip == 0.0 and raw_lossless_roundtrip == 1.0


def test_once_the_corpus_is_normalised_the_normalising_tokenizer_has_no_advantage() -> None:
    def normal(lines: list[str]) -> list[str]:
        return [normalize_line(line, "nfkc", CleaningStats()) for line in lines]

    nfkc, nfkc_roundtrip = score(True, normal(TRAIN), normal(HELDOUT))
    lossless, lossless_roundtrip = score(False, normal(TRAIN), normal(HELDOUT))
    assert nfkc == pytest.approx(lossless, rel=1e-9)
    assert nfkc_roundtrip == lossless_roundtrip == 1.0


# --- data for the model's size -----------------------------------------------------------


def test_data_facts_count_tokens_and_non_embedding_parameters_by_hand() -> None:
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 3))
    facts = data_facts(model, np.bincount([1, 2, 2, 5, 1, 9]))
    # the linear layer: 4 x 3 weights + 3 biases; the embedding's 40 are left out
    assert facts == {
        "training_tokens": 6,
        "unique_training_tokens": 4,
        "non_embedding_parameters": 15,
        "tokens_per_parameter": pytest.approx(6 / 15),
    }


def test_a_corpus_too_small_for_the_preset_is_refused_naming_the_numbers() -> None:
    facts = {
        "training_tokens": 520_000,
        "non_embedding_parameters": 85_000_000,
        "tokens_per_parameter": 520_000 / 85_000_000,
    }
    with pytest.raises(TokstudyError) as error:
        _check_data(ClmConfig(min_tokens_per_parameter=20), facts, "corpora/en")
    message = str(error.value)
    assert "\n" not in message and "520,000 training tokens" in message
    assert "min_tokens_per_parameter 20" in message and "1,700,000,000 tokens" in message
    _check_data(ClmConfig(), facts, "corpora/en")  # 0: no check


def test_a_negative_minimum_is_one_line_naming_the_key() -> None:
    with pytest.raises(TokstudyError, match=r"models\.clm\.min_tokens_per_parameter"):
        ClmConfig(min_tokens_per_parameter=-1)


def test_a_larger_scale_with_a_higher_validation_loss_is_data_starved() -> None:
    table = pd.DataFrame(
        {
            "language": ["en"] * 5 + ["fi"] * 2,
            "tokenizer": ["bpe"] * 7,
            "vocab_size": ["1000"] * 7,
            "validation_lines": [200] * 7,
            "scale": ["tiny", "tiny", "small", "small", "base", "tiny", "small"],
            "parameters": [1, 1, 4, 4, 88, 1, 4],
            "seed": [0, 1, 0, 1, 0, 0, 0],
            # en: tiny 4.0 (mean), small 3.5 and 4.2, base 3.9; fi: small better than tiny
            "best_validation_loss": [3.9, 4.1, 3.5, 4.2, 3.9, 5.0, 4.0],
        }
    )
    assert data_starved(table).tolist() == [False, False, False, True, True, False, False]


def test_data_starved_needs_a_strictly_lower_smaller_loss_and_keeps_the_tables_index() -> None:
    # a tie is not starvation; the answer is indexed as the table is, in its order
    table = pd.DataFrame(
        {
            "language": ["en"] * 4,
            "tokenizer": ["bpe", "bpe", "hft", "hft"],
            "vocab_size": ["1000"] * 4,
            "validation_lines": [200] * 4,
            "parameters": [1, 4, 1, 4],
            "best_validation_loss": [3.0, 3.0, 3.0, 3.2],
        },
        index=[7, 2, 9, 4],
    )
    starved = data_starved(table)
    assert starved.index.tolist() == [7, 2, 9, 4]
    assert starved.tolist() == [False, False, False, True]
