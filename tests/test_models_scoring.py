"""Model stage: pseudo-log-likelihood scoring, MLM metrics and misspelling noise."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import BertConfig, BertForMaskedLM

from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models.charbert import (
    CharacterBertForMaskedLM,
    CharBertScorer,
    Speller,
    model_settings,
)
from tokstudy.models.config import CharBertConfig, EvalConfig, PretrainConfig
from tokstudy.models.fast_transformers_tokenizer import train_wordpiece, word_level
from tokstudy.models.mlm_scoring import BertScorer, mlm_metrics, score_lines
from tokstudy.models.noise import (
    EDIT_KINDS,
    Misspeller,
    is_matra,
    noise_lines,
    noise_word_lists,
    relative_changes,
)
from tokstudy.models.tasks import evaluate_mlm

pytestmark = [pytest.mark.shared, pytest.mark.usefixtures("one_torch_thread")]


EN = SHARED / "corpora" / "hft2022" / "en.txt.gz"
MR = SHARED / "corpora" / "hft2022" / "mr.txt.gz"


@pytest.fixture(scope="module")
def english() -> list[str]:
    return read_nonblank_lines(EN, 200)


@pytest.fixture(scope="module")
def tokenizer(english):
    return train_wordpiece(english, 300)


class FixedLogits(torch.nn.Module):
    """A mocked MLM: the same logits everywhere; records each input it sees."""

    def __init__(self, logits: torch.Tensor) -> None:
        super().__init__()
        self.fixed = logits
        self.seen: list[torch.Tensor] = []

    def forward(self, input_ids, attention_mask):
        self.seen.append(input_ids.clone())
        shape = (*input_ids.shape, len(self.fixed))

        class Out:
            logits = self.fixed.expand(shape)

        return Out()


def test_bits_per_char_matches_hand_computation(tokenizer):
    lines = ["The hospital said that.", "Bajirao Sathe will have to submit the documents."]
    vocab = len(tokenizer)
    logits = torch.linspace(-2.0, 3.0, vocab)
    model = FixedLogits(logits)
    scorer = BertScorer(model, tokenizer, max_length=8)  # forces windows of 6 tokens
    scores = score_lines(scorer, lines, batch_size=5)

    logp = torch.log_softmax(logits, dim=0).numpy()
    ids = [tokenizer(line, add_special_tokens=False)["input_ids"] for line in lines]
    nll = [-sum(logp[i] for i in line_ids) for line_ids in ids]
    assert scores["units"].tolist() == [len(i) for i in ids]
    assert scores["nll"].to_numpy() == pytest.approx(nll)

    metrics = mlm_metrics(scores)
    chars = sum(len(line) for line in lines)  # spaces included
    words = 4 + 8
    assert metrics["bits_per_char"] == pytest.approx(sum(nll) / math.log(2) / chars)
    assert metrics["pll_per_word"] == pytest.approx(-sum(nll) / words)
    # float32 log-probabilities summed in another order than torch's: the exp of their mean
    # agrees to float32's precision (1.1e-6 apart seen in a full test run), not to 1e-6
    perplexity = math.exp(sum(nll) / sum(map(len, ids)))
    assert metrics["pseudo_perplexity"] == pytest.approx(perplexity, rel=1e-5)

    # every copy masks exactly one position of a window framed by [CLS] ... [SEP]
    copies = torch.cat(
        [torch.nn.functional.pad(x, (0, 8 - x.shape[1]), value=-1) for x in model.seen]
    )
    assert len(copies) == sum(map(len, ids))
    assert ((copies == tokenizer.mask_token_id).sum(dim=1) == 1).all()
    assert (copies[:, 0] == tokenizer.cls_token_id).all()


def test_uniform_model_gives_log2_vocab_bits_per_token(tokenizer):
    lines = ["It is also doubtful whether Bajirao will be able to work again."]
    model = FixedLogits(torch.zeros(len(tokenizer)))
    metrics = mlm_metrics(score_lines(BertScorer(model, tokenizer), lines))
    expected = metrics["units"] * math.log2(len(tokenizer)) / len(lines[0])
    assert metrics["bits_per_char"] == pytest.approx(expected)
    assert metrics["pseudo_perplexity"] == pytest.approx(len(tokenizer))


def test_tiny_bert_scores_are_those_of_each_token_masked_alone(tokenizer, english):
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = BertForMaskedLM(config)
    model.train()
    ids = [tokenizer(line, add_special_tokens=False)["input_ids"] for line in english[:20]]
    lines = [line for line, line_ids in zip(english, ids, strict=False) if len(line_ids) <= 30][:4]
    assert len(lines) == 4
    scores = score_lines(BertScorer(model, tokenizer, max_length=32), lines)
    assert model.training  # restored after scoring
    # brute force: each token masked alone in [CLS] line [SEP], one forward pass each
    model.eval()
    expected = []
    with torch.no_grad():
        for line in lines:
            line_ids = tokenizer(line, add_special_tokens=False)["input_ids"]
            nll = 0.0
            for position, target in enumerate(line_ids):
                masked = list(line_ids)
                masked[position] = tokenizer.mask_token_id
                inputs = torch.tensor([[tokenizer.cls_token_id, *masked, tokenizer.sep_token_id]])
                logits = model(input_ids=inputs).logits[0, position + 1]
                nll -= torch.log_softmax(logits, dim=-1)[target].item()
            expected.append(nll)
    assert scores["nll"].tolist() == pytest.approx(expected, rel=1e-4)
    metrics = mlm_metrics(scores)
    units = sum(len(tokenizer(line, add_special_tokens=False)["input_ids"]) for line in lines)
    assert metrics["pseudo_perplexity"] == pytest.approx(math.exp(sum(expected) / units), rel=1e-4)
    chars = sum(len(line) for line in lines)
    assert metrics["bits_per_char"] == pytest.approx(sum(expected) / math.log(2) / chars, rel=1e-4)


def test_characterbert_scorer_uses_words(tmp_path):
    lines = read_nonblank_lines(MR, 4)
    words = sorted({w for line in lines for w in line.split()})[:40]
    speller = Speller(tuple(sorted({c for w in words for c in w})), 8)
    tokenizer = word_level(words)
    config = PretrainConfig(preset="tiny", max_length=16)
    charbert = CharBertConfig(max_word_chars=8, filters=((1, 4), (2, 4)))
    torch.manual_seed(0)
    model = CharacterBertForMaskedLM(model_settings(config, charbert, speller, len(tokenizer)))
    scores = score_lines(CharBertScorer(model, tokenizer, speller, max_length=16), lines)
    assert scores["units"].tolist() == [len(line.split()) for line in lines]
    # only 40 words are in the vocabulary: every other word is an [UNK] target
    known = set(words)
    assert scores["unk"].tolist() == [sum(w not in known for w in line.split()) for line in lines]
    assert scores["unk"].sum() > 0
    assert np.isfinite(scores["nll"]).all()


def test_evaluate_mlm_writes_clean_and_noised_rows(tmp_path, tokenizer, english):
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    BertForMaskedLM(config).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "tok")
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join(english[-20:]), encoding="utf-8")
    table = evaluate_mlm(
        tmp_path / "model",
        tmp_path / "tok",
        heldout,
        tmp_path / "mlm.tsv",
        EvalConfig(max_lines=10, noise_levels=(10, 30), device="cpu"),
        edits_tsv=tmp_path / "edits.tsv",
    )
    written = pd.read_csv(tmp_path / "mlm.tsv", sep="\t")
    assert sorted(written["level"].unique()) == [0, 10, 30]
    clean = written[(written.level == 0)].set_index("metric")
    assert (clean["relative_change"].drop("unk_rate") == 0).all()
    assert clean.loc["lines", "value"] == 10
    assert len(table) == len(written)
    edits = pd.read_csv(tmp_path / "edits.tsv", sep="\t")
    assert len(edits) >= 3 and set(edits["kind"]) <= set(EDIT_KINDS)


# --- noise --------------------------------------------------------------------------


def test_noise_levels_are_nested_and_seeded():
    lines = read_nonblank_lines(MR, 60)
    noised, edits = noise_lines(lines, (10, 20, 30), seed=4)
    changed = {
        level: {i for i, (a, b) in enumerate(zip(lines, text, strict=True)) if a != b}
        for level, text in noised.items()
    }
    assert len(changed[10]) == 6 and len(changed[20]) == 12 and len(changed[30]) == 18
    assert changed[10] <= changed[20] <= changed[30]
    for i in changed[10]:
        assert noised[10][i] == noised[20][i] == noised[30][i]
    assert set(edits["sentence"]) == changed[30]
    again, _ = noise_lines(lines, (20,), seed=4)
    assert again[20] == noised[20]
    other, _ = noise_lines(lines, (20,), seed=5)
    assert other[20] != noised[20]
    for level, text in noised.items():  # words and spacing kept, only spellings change
        assert [len(t.split()) for t in text] == [len(line.split()) for line in lines], level
    assert "matra" in set(edits["kind"])


def test_noise_on_word_lists_keeps_alignment():
    sentences = [["The", "cat", "sat", "."], ["A", "dog", "ran", "away", "!"]] * 5
    noised, edits = noise_word_lists(sentences, (50,), seed=0, word_fraction=0.5)
    assert [len(s) for s in noised[50]] == [len(s) for s in sentences]
    assert sum(a != b for a, b in zip(noised[50], sentences, strict=True)) == 5
    assert "." not in set(edits["original"]) and "!" not in set(edits["original"])


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("house", "insertion"),
        ("house", "deletion"),
        ("house", "substitution"),
        ("house", "transposition"),
        ("बोलताना", "matra"),
        ("আমার", "matra"),
    ],
)
def test_each_edit_kind(word, kind):
    misspeller = Misspeller(tuple("abcdefghijklmnopqrstuvwxyz"))
    rng = np.random.default_rng(0)
    noisy = getattr(misspeller, f"_{kind}")(word, rng)
    assert noisy != word
    if kind == "insertion":
        assert len(noisy) == len(word) + 1
    elif kind == "deletion":
        assert len(noisy) == len(word) - 1
    elif kind == "transposition":
        assert sorted(noisy) == sorted(word) and len(noisy) == len(word)
    else:
        diff = [i for i, (a, b) in enumerate(zip(word, noisy, strict=True)) if a != b]
        assert len(diff) == 1
        if kind == "matra":
            old, new = word[diff[0]], noisy[diff[0]]
            assert is_matra(old) and is_matra(new)
            assert unicodedata.category(new) in ("Mn", "Mc")
            assert (ord(old) >> 7) == (ord(new) >> 7)  # same 128-code-point block


def test_matra_is_only_devanagari_and_bengali_signs():
    assert is_matra("ा") and is_matra("ি") and is_matra("्")
    assert not is_matra("क") and not is_matra("\u0301") and not is_matra("a")


@settings(max_examples=60, deadline=None)
@given(word=st.text(alphabet="abकखािोে্", min_size=1, max_size=8), seed=st.integers(0, 50))
def test_misspell_always_changes_a_word_it_can_change(word, seed):
    misspeller = Misspeller(tuple("abक"))
    noisy, kind = misspeller.misspell(word, np.random.default_rng(seed))
    assert kind in EDIT_KINDS
    assert noisy != word


def test_relative_changes():
    table = relative_changes({0: {"bpc": 2.0, "pll": -4.0}, 10: {"bpc": 2.5, "pll": -5.0}})
    noisy = table[table.level == 10].set_index("metric")["relative_change"]
    assert noisy["bpc"] == pytest.approx(0.25) and noisy["pll"] == pytest.approx(-0.25)
