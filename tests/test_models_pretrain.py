"""Model stage: pretraining loop, checkpoints, resume, devices and CharacterBERT."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SHARED
from transformers import BertForMaskedLM

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models.charbert import (
    BOW,
    EOW,
    FIRST_CHAR,
    CharacterBertForMaskedLM,
    Speller,
    load_charbert,
    model_settings,
    prepare_charbert,
    pretrain_charbert,
)
from tokstudy.models.config import CharBertConfig, PretrainConfig
from tokstudy.models.data import TokenCorpus, pretokenize
from tokstudy.models.fast_transformers_tokenizer import train_wordpiece
from tokstudy.models.masking import LABEL_POSITIONS, with_label_positions
from tokstudy.models.pretrain import (
    SUMMARY_FILE,
    BertBatches,
    bert_config,
    bert_mlm_loss,
    pretrain_bert,
    train_mlm,
)
from tokstudy.training import device as device_module
from tokstudy.training.config import from_mapping
from tokstudy.training.core import CHECKPOINT_FILE, LOG_FILE

pytestmark = [pytest.mark.shared, pytest.mark.usefixtures("one_torch_thread")]


EN = SHARED / "corpora" / "hft2022" / "en.txt.gz"
MR = SHARED / "corpora" / "hft2022" / "mr.txt.gz"


CONFIG = PretrainConfig(
    steps=12,
    batch_size=4,
    max_length=24,
    warmup_steps=2,
    lr=2e-3,
    log_every=3,
    checkpoint_every=4,
    device="cpu",
)


@pytest.fixture(scope="module")
def english() -> list[str]:
    return read_nonblank_lines(EN, 200)


@pytest.fixture(scope="module")
def tokenizer(english):
    return train_wordpiece(english, 300)


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory, english, tokenizer) -> Path:
    root = tmp_path_factory.mktemp("pretrain")
    text = root / "train.txt"
    text.write_text("\n".join(english), encoding="utf-8")
    pretokenize(tokenizer, text, root / "corpus")
    return root / "corpus"


class Interrupted(Exception):
    """Stands for a kill in the middle of training."""


def _log_rows(run: Path) -> list[dict[str, str]]:
    with (run / LOG_FILE).open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_loss_falls_on_a_repeated_batch(tmp_path, corpus_dir, tokenizer):
    config = PretrainConfig(**{**CONFIG.__dict__, "steps": 20, "log_every": 1, "dropout": 0.0})
    fixed = BertBatches(TokenCorpus.open(corpus_dir), tokenizer, config)(0)
    torch.manual_seed(0)
    model = BertForMaskedLM(bert_config(tokenizer, config))
    train_mlm(
        model,
        lambda step: fixed,
        config,
        tmp_path,
        device=torch.device("cpu"),
        run_fingerprint="x",
        loss_fn=bert_mlm_loss,
    )
    losses = [float(row["loss"]) for row in _log_rows(tmp_path)]
    assert len(losses) == 20
    assert losses[-1] < 0.7 * losses[0]
    assert all(float(row["tokens_per_s"]) > 0 for row in _log_rows(tmp_path))


def test_resume_after_kill_matches_uninterrupted_run(tmp_path, corpus_dir, tokenizer):
    straight = pretrain_bert(tokenizer, corpus_dir, tmp_path / "straight", CONFIG)

    def kill_at_step_10(step: int) -> None:
        if step == 10:
            raise Interrupted

    run = tmp_path / "killed"
    with pytest.raises(Interrupted):
        pretrain_bert(tokenizer, corpus_dir, run, CONFIG, on_step=kill_at_step_10)
    assert torch.load(run / CHECKPOINT_FILE, weights_only=True)["step"] == 8
    assert [r["step"] for r in _log_rows(run)] == ["3", "6", "9"]
    resumed = pretrain_bert(tokenizer, corpus_dir, run, CONFIG)

    a = BertForMaskedLM.from_pretrained(straight).state_dict()
    b = BertForMaskedLM.from_pretrained(resumed).state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [r["step"] for r in _log_rows(run)] == ["3", "6", "9", "12"]
    assert not (run / CHECKPOINT_FILE).exists()
    summary = json.loads((run / SUMMARY_FILE).read_text())
    assert summary["steps"] == 12 and np.isfinite(summary["final_loss"])
    # the final loss against the unigram entropy of the corpus's tokens, by hand
    counts = np.bincount(TokenCorpus.open(corpus_dir).ids)
    share = counts[counts > 0] / counts.sum()
    assert summary["unigram_entropy"] == pytest.approx(-(share * np.log(share)).sum())
    below = 1 - summary["final_loss"] / summary["unigram_entropy"]
    assert summary["below_unigram"] == pytest.approx(below)
    assert summary["undertrained"] == float(below < CONFIG.undertrained_margin)


def test_corrupt_checkpoint_is_an_error_or_ignored(tmp_path, corpus_dir, tokenizer, caplog):
    run = tmp_path / "run"
    run.mkdir()
    (run / CHECKPOINT_FILE).write_bytes(b"not a checkpoint")
    with pytest.raises(TokstudyError, match=r"checkpoint\.pt: corrupt checkpoint"):
        pretrain_bert(tokenizer, corpus_dir, run, CONFIG)
    lenient = PretrainConfig(**{**CONFIG.__dict__, "on_bad_checkpoint": "restart", "steps": 2})
    with caplog.at_level(logging.WARNING):
        pretrain_bert(tokenizer, corpus_dir, run, lenient)
    assert "corrupt checkpoint" in caplog.text
    assert (run / "model" / "config.json").is_file()


def test_checkpoint_from_other_settings_is_refused(tmp_path, corpus_dir, tokenizer):
    run = tmp_path / "run"
    with pytest.raises(Interrupted):
        pretrain_bert(tokenizer, corpus_dir, run, CONFIG, on_step=lambda s: s == 5 and _raise())
    other = PretrainConfig(**{**CONFIG.__dict__, "lr": 1e-4})
    with pytest.raises(TokstudyError, match="different training settings"):
        pretrain_bert(tokenizer, corpus_dir, run, other)


def _raise() -> None:
    raise Interrupted


def test_missing_gpu_policy(monkeypatch, caplog):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(TokstudyError, match="no CUDA GPU is available"):
        device_module.resolve_device("cuda", "error")
    with caplog.at_level(logging.WARNING):
        assert device_module.resolve_device("cuda", "fallback").type == "cpu"
    assert "using the CPU" in caplog.text
    assert device_module.resolve_device("auto", "error").type == "cpu"
    assert device_module.describe(torch.device("cpu")).startswith("CPU ")


def test_whole_word_mask_needs_char_spans(tmp_path, corpus_dir, tokenizer):
    config = PretrainConfig(**{**CONFIG.__dict__, "whole_word_mask": True})
    with pytest.raises(TokstudyError, match="needs a corpus pre-tokenized with character spans"):
        pretrain_bert(tokenizer, corpus_dir, tmp_path / "run", config)


@pytest.mark.parametrize(("attention_dropout", "expected"), [(None, 0.1), (0.0, 0.0), (0.3, 0.3)])
def test_attention_dropout_left_out_is_dropout(tokenizer, attention_dropout, expected):
    config = PretrainConfig(dropout=0.1, attention_dropout=attention_dropout)
    bert = bert_config(tokenizer, config)
    assert (bert.hidden_dropout_prob, bert.attention_probs_dropout_prob) == (0.1, expected)
    bert_settings = model_settings(config, CharBertConfig(), Speller(("a",), 4), 10)["bert"]
    assert bert_settings["attention_probs_dropout_prob"] == expected


def test_attention_dropout_reaches_the_attention(tokenizer):
    """With every other dropout off, two forward passes in training mode differ exactly
    when the attention probabilities are dropped."""
    ids = torch.randint(5, len(tokenizer), (2, 16), generator=torch.Generator().manual_seed(0))
    outputs = {}
    for attention_dropout in (0.0, 0.5):
        config = PretrainConfig(dropout=0.0, attention_dropout=attention_dropout)
        torch.manual_seed(0)
        model = BertForMaskedLM(bert_config(tokenizer, config)).train()
        outputs[attention_dropout] = [model(input_ids=ids).logits for _ in range(2)]
    assert torch.equal(*outputs[0.0])
    assert not torch.allclose(*outputs[0.5])


@pytest.mark.parametrize("value", [-0.1, 1.0, 1.5])
def test_attention_dropout_out_of_range_is_one_line(value):
    with pytest.raises(TokstudyError, match=r"^models\.pretrain\.attention_dropout must be in"):
        from_mapping(PretrainConfig, {"attention_dropout": value}, "models.pretrain")


def test_speller_spells_words_and_specials():
    speller = Speller(("a", "b"), 6)
    assert speller.spell("ab").tolist() == [BOW, FIRST_CHAR, FIRST_CHAR + 1, EOW, 0, 0]
    a, b = FIRST_CHAR, FIRST_CHAR + 1
    assert speller.spell("abzabab").tolist() == [BOW, a, b, 1, a, EOW]  # unknown z, cut
    assert speller.spell("[MASK]").tolist() == [BOW, 8, EOW, 0, 0, 0]


def test_characterbert_trains_saves_and_reloads(tmp_path):
    text = tmp_path / "mr.txt"
    text.write_text("\n".join(read_nonblank_lines(MR, 150)), encoding="utf-8")
    charbert = CharBertConfig(
        word_vocab_size=300, max_word_chars=10, filters=((1, 8), (2, 8), (3, 16))
    )
    prepare_charbert(text, tmp_path / "prepared", charbert)
    config = PretrainConfig(**{**CONFIG.__dict__, "steps": 6})
    model_dir = pretrain_charbert(tmp_path / "prepared", tmp_path / "run", config)
    model, word_tokenizer, speller = load_charbert(model_dir)
    assert len(word_tokenizer) == 300 and speller.max_word_chars == 10
    losses = [float(r["loss"]) for r in _log_rows(tmp_path / "run")]
    assert all(np.isfinite(losses))
    chars = torch.from_numpy(
        speller.spell_all(read_nonblank_lines(MR, 1)[0].split()[:8]).astype(np.int64)
    )
    model.eval()
    reloaded = CharacterBertForMaskedLM.from_pretrained(model_dir).eval()
    with torch.no_grad():
        logits = model(char_ids=chars[None]).logits
        assert logits.shape == (1, chars.shape[0], 300)
        assert torch.equal(logits, reloaded(char_ids=chars[None]).logits)
        labels = torch.full((1, chars.shape[0]), -100)
        labels[0, [1, 4]] = torch.tensor([5, 7])
        positions = with_label_positions({"labels": labels})[LABEL_POSITIONS]
        loss = model.mlm_loss(chars[None], labels, positions)
        assert torch.equal(loss, model.mlm_loss(chars[None], labels))
        expected = torch.nn.functional.cross_entropy(logits[0, [1, 4]], torch.tensor([5, 7]))
        assert loss.item() == pytest.approx(expected.item(), rel=1e-5)


def test_masked_only_loss_equals_full_loss(corpus_dir, tokenizer):
    batch = BertBatches(TokenCorpus.open(corpus_dir), tokenizer, CONFIG)(3)
    torch.manual_seed(0)
    model = BertForMaskedLM(bert_config(tokenizer, CONFIG)).eval()
    with torch.no_grad():
        assert bert_mlm_loss(model, batch).item() == pytest.approx(model(**batch).loss.item())


def _brute_force_positions(labels: torch.Tensor) -> list[int]:
    width = labels.shape[1]
    return [
        row * width + column
        for row in range(labels.shape[0])
        for column in range(width)
        if labels[row, column] != -100
    ]


def test_host_found_positions_give_the_boolean_gathers_loss(corpus_dir, tokenizer):
    batch = BertBatches(TokenCorpus.open(corpus_dir), tokenizer, CONFIG)(3)
    prepared = with_label_positions(batch)
    assert prepared[LABEL_POSITIONS].tolist() == _brute_force_positions(batch["labels"])
    torch.manual_seed(0)
    model = BertForMaskedLM(bert_config(tokenizer, CONFIG)).eval()
    with torch.no_grad():
        assert torch.equal(bert_mlm_loss(model, prepared), bert_mlm_loss(model, batch))
        # the same positions, in the same order: the same loss to the last bit
        graphs = []

        def recording_backend(graph_module, example_inputs):
            graphs.append(graph_module)
            return graph_module.forward

        # and without a data-dependent shape torch.compile takes the loss as one graph (the
        # boolean gather breaks it into 4, around the wait for the device's count)
        compiled = torch.compile(bert_mlm_loss, backend=recording_backend)
        assert torch.equal(compiled(model, prepared), bert_mlm_loss(model, batch))
        assert len(graphs) == 1


def test_the_loop_gives_each_micro_batch_the_positions_of_its_own_rows(
    tmp_path, corpus_dir, tokenizer
):
    config = PretrainConfig(**{**CONFIG.__dict__, "steps": 2, "accumulate": 2})
    batches = BertBatches(TokenCorpus.open(corpus_dir), tokenizer, config)
    seen: list[dict[str, torch.Tensor]] = []

    def recording_loss(model, batch):
        seen.append(batch)
        return bert_mlm_loss(model, batch)

    torch.manual_seed(0)
    model = BertForMaskedLM(bert_config(tokenizer, config))
    train_mlm(
        model,
        batches,
        config,
        tmp_path,
        device=torch.device("cpu"),
        run_fingerprint="x",
        loss_fn=recording_loss,
    )
    assert len(seen) == 4 and all(len(batch["labels"]) == 2 for batch in seen)
    for step in range(2):
        labels = batches(step)["labels"]
        for part, rows in enumerate((labels[:2], labels[2:])):
            micro = seen[2 * step + part]
            assert torch.equal(micro["labels"], rows)
            assert micro[LABEL_POSITIONS].tolist() == _brute_force_positions(rows)
