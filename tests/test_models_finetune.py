"""Model stage: UD reading and splits, label alignment, TSV datasets, fine-tuning."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from conftest import SHARED
from transformers import BertConfig, BertForMaskedLM

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_nonblank_lines
from tokstudy.models.charbert import (
    CharacterBertForMaskedLM,
    Speller,
    SpellingTokenizer,
    model_settings,
)
from tokstudy.models.config import CharBertConfig, FinetuneConfig, PretrainConfig
from tokstudy.models.family import family_of_model
from tokstudy.models.fast_transformers_tokenizer import train_wordpiece
from tokstudy.models.finetune import IGNORE, sentence_examples, tagging_examples
from tokstudy.models.tasks import (
    METRICS_FILE,
    PREDICTIONS_FILE,
    SUMMARY_FILE,
    finetune_pos,
    finetune_sentence,
)
from tokstudy.models.tsv_datasets import check_header, check_labels, read_tsv_dataset
from tokstudy.models.ud_sentences import feature_labels, has_feature, read_conllu, ud_splits

pytestmark = [pytest.mark.shared, pytest.mark.usefixtures("one_torch_thread")]


UD = SHARED / "ud"
EN = SHARED / "corpora" / "hft2022" / "en.txt.gz"
MR = SHARED / "corpora" / "hft2022" / "mr.txt.gz"

CONLLU = """# sent_id = s1
# text = Don't stop.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\t_\tMood=Imp|Tense=Past\t3\taux\t_\t_
2\tn't\tnot\tPART\t_\tPolarity=Neg\t3\tadvmod\t_\t_
3\tstop\tstop\tVERB\t_\tVerbForm=Fin\t0\troot\t_\tSpaceAfter=No
3.1\tgo\tgo\tVERB\t_\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = s2
1\tStop\tstop\tVERB\t_\tTense=Pres\t0\troot\t_\t_

"""


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(read_nonblank_lines(EN, 200) + read_nonblank_lines(MR, 200), 500)


@pytest.fixture(scope="module")
def model_and_tokenizer(tmp_path_factory, tokenizer) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("finetune")
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(root / "model")
    tokenizer.save_pretrained(root / "tok")
    return root / "model", root / "tok"


def _write_gz(path: Path, text: str) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)


# --- UD -----------------------------------------------------------------------------


def test_read_conllu_skips_ranges_and_empty_nodes(tmp_path):
    path = tmp_path / "x-ud-test.conllu.gz"
    _write_gz(path, CONLLU)
    first, second = read_conllu(path)
    assert first.words == ("Do", "n't", "stop", ".")
    assert first.upos == ("AUX", "PART", "VERB", "PUNCT")
    assert first.text == "Don't stop." and second.text == "Stop"
    assert has_feature(first, "Tense=Past") and not has_feature(second, "Tense=Past")
    assert not has_feature(first, "Tense=Past", upos=("VERB",))
    assert feature_labels([first, second], "Tense=Past") == [("Don't stop.", "yes"), ("Stop", "no")]


def test_ud_split_of_dev_is_seeded_and_disjoint():
    treebank = UD / "UD_Irish-IDT"
    a = ud_splits(treebank, seed=3)
    b = ud_splits(treebank, seed=3)
    c = ud_splits(treebank, seed=4)
    ids = {name: [s.sent_id for s in sents] for name, sents in a.items()}
    assert ids == {name: [s.sent_id for s in sents] for name, sents in b.items()}
    assert [s.sent_id for s in c["validation"]] != ids["validation"]
    dev = [s.sent_id for s in read_conllu(next(treebank.glob("*-ud-dev.conllu.gz")))]
    assert sorted(ids["train"] + ids["validation"]) == sorted(dev)
    assert not set(ids["train"]) & set(ids["validation"])
    assert len(ids["validation"]) == round(0.1 * len(dev))
    assert [s.sent_id for s in c["test"]] == ids["test"]  # test stays test


def test_ud_split_uses_train_when_present():
    splits = ud_splits(UD / "UD_Marathi-UFAL")
    assert {k: len(v) for k, v in splits.items()} == {"train": 373, "validation": 46, "test": 47}


def test_ud_split_errors(tmp_path):
    with pytest.raises(TokstudyError, match="no \\*-ud-test"):
        ud_splits(tmp_path)
    _write_gz(tmp_path / "xx-ud-test.conllu.gz", CONLLU)
    with pytest.raises(TokstudyError, match="neither a train nor a dev file"):
        ud_splits(tmp_path)
    with pytest.raises(TokstudyError, match="treebank folder not found"):
        ud_splits(tmp_path / "missing")


# --- label alignment ----------------------------------------------------------------


def test_first_subword_carries_the_word_label(tokenizer):
    words = ["Bajirao", "Sathe", "said", "undergoing", "treatment", "."]
    labels = [1, 2, 3, 4, 5, 6]
    (example,) = tagging_examples(tokenizer, [words], [labels], max_length=64)
    pieces = [tokenizer(w, add_special_tokens=False)["input_ids"] for w in words]
    flat = [i for piece in pieces for i in piece]
    expected_ids = [tokenizer.cls_token_id, *flat, tokenizer.sep_token_id]
    expected_labels = [IGNORE]
    for piece, label in zip(pieces, labels, strict=True):
        expected_labels += [label] + [IGNORE] * (len(piece) - 1)
    expected_labels.append(IGNORE)
    assert example.input_ids == expected_ids
    assert example.labels == expected_labels
    assert any(len(p) > 1 for p in pieces)  # the test covers continuation pieces


def test_long_sentences_are_chunked_without_losing_words(tokenizer):
    words = read_nonblank_lines(MR, 1)[0].split() * 3
    labels = list(range(len(words)))
    examples = tagging_examples(tokenizer, [words], [labels], max_length=12)
    assert len(examples) > 1
    assert all(len(e.input_ids) <= 12 for e in examples)
    kept = [label for e in examples for label in e.labels if label != IGNORE]
    assert kept == labels
    assert {e.source for e in examples} == {0}


def test_sentence_examples_truncate(tokenizer):
    (example,) = sentence_examples(tokenizer, [read_nonblank_lines(EN, 1)[0]], [1], max_length=8)
    assert len(example.input_ids) == 8 and example.labels == 1
    assert example.input_ids[0] == tokenizer.cls_token_id
    assert example.input_ids[-1] == tokenizer.sep_token_id


# --- TSV datasets -------------------------------------------------------------------


def test_tsv_dataset_reading_and_errors(tmp_path):
    good = tmp_path / "good.tsv"
    good.write_text('id\ttext\tlabel\n1\tA "quoted" text\tpos\n2\tanother\tneg\n', "utf-8")
    assert read_tsv_dataset(good) == [('A "quoted" text', "pos"), ("another", "neg")]
    missing = tmp_path / "missing.tsv"
    missing.write_text("sentence\tlabel\nx\ty\n", encoding="utf-8")
    for read in (read_tsv_dataset, check_header):
        with pytest.raises(TokstudyError, match=r"missing\.tsv: missing column\(s\) text"):
            read(missing)
    check_header(good)
    empty = tmp_path / "empty.tsv"
    empty.write_text("text\tlabel\nx\t\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match="empty text or label on data line 1"):
        read_tsv_dataset(empty)
    with pytest.raises(TokstudyError, match="dataset file not found"):
        read_tsv_dataset(tmp_path / "none.tsv")
    with pytest.raises(
        TokstudyError, match=r"test\.tsv: label\(s\) not in the training data: maybe"
    ):
        check_labels(["neg", "pos"], [("x", "pos"), ("y", "maybe")], "test.tsv")


# --- fine-tuning --------------------------------------------------------------------

FAST = FinetuneConfig(epochs=2, batch_size=16, lr=1e-3, max_length=32, device="cpu")


def _small_marathi_treebank(folder: Path, train: int = 60) -> Path:
    """The first ``train`` / 15 / 20 sentences of UD Marathi-UFAL's train / dev / test."""
    folder.mkdir()
    for split, count in (("train", train), ("dev", 15), ("test", 20)):
        source = next((UD / "UD_Marathi-UFAL").glob(f"*-ud-{split}.conllu.gz"))
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            blocks = handle.read().strip().split("\n\n")[:count]
        _write_gz(folder / f"mr_small-ud-{split}.conllu.gz", "\n\n".join(blocks) + "\n\n")
    return folder


def test_finetune_pos_on_a_small_treebank(tmp_path, model_and_tokenizer):
    treebank = _small_marathi_treebank(tmp_path / "UD_Small")
    model_dir, tok_dir = model_and_tokenizer
    metrics = finetune_pos(
        model_dir, tok_dir, tmp_path / "out", FAST, treebank=treebank, noise_levels=(30,)
    )
    assert set(metrics["level"]) == {0, 30}
    assert set(metrics["metric"]) == {"accuracy", "macro_f1", "majority_accuracy", "collapsed"}
    assert metrics["value"].between(0, 1).all()
    assert (metrics[metrics.level == 0]["relative_change"] == 0).all()
    predictions = pd.read_csv(tmp_path / "out" / PREDICTIONS_FILE, sep="\t")
    n_words = sum(len(s.words) for s in read_conllu(treebank / "mr_small-ud-test.conllu.gz"))
    assert (predictions.groupby("level").size() == n_words).all()
    written = pd.read_csv(tmp_path / "out" / METRICS_FILE, sep="\t")
    assert len(written) == 8
    summary = json.loads((tmp_path / "out" / SUMMARY_FILE).read_text())
    assert summary["best_epoch"] in (1, 2) and "NOUN" in summary["labels"]
    torch.manual_seed(12345)  # another torch RNG state (as in a fresh process) …
    again = finetune_pos(
        model_dir, tok_dir, tmp_path / "again", FAST, treebank=treebank, noise_levels=(30,)
    )
    # … gives the same fine-tuned model: the classifier is initialised from the seed
    pd.testing.assert_frame_equal(again, metrics)
    assert (tmp_path / "again" / PREDICTIONS_FILE).read_bytes() == (
        tmp_path / "out" / PREDICTIONS_FILE
    ).read_bytes()


def _clean_scores(out_dir: Path) -> pd.Series:
    table = pd.read_csv(out_dir / METRICS_FILE, sep="\t")
    return table[table["level"] == 0].set_index("metric")["value"]


def test_a_fine_tune_that_learns_nothing_is_flagged_collapsed(
    tmp_path, model_and_tokenizer, caplog
):
    treebank = _small_marathi_treebank(tmp_path / "UD_Small")
    model_dir, tok_dir = model_and_tokenizer
    frozen = dataclasses.replace(FAST, lr=0.0, epochs=1)
    with caplog.at_level("WARNING"):
        finetune_pos(model_dir, tok_dir, tmp_path / "frozen", frozen, treebank=treebank)
    clean = _clean_scores(tmp_path / "frozen")
    gold = pd.read_csv(tmp_path / "frozen" / PREDICTIONS_FILE, sep="\t")["gold"]
    assert clean["majority_accuracy"] == pytest.approx(gold.value_counts().iloc[0] / len(gold))
    assert clean["collapsed"] == 1.0
    assert any("collapsed" in record.getMessage() for record in caplog.records)


def test_a_real_tiny_fine_tune_on_marathi_is_not_collapsed(tmp_path, model_and_tokenizer):
    treebank = _small_marathi_treebank(tmp_path / "UD_Small", train=300)
    model_dir, tok_dir = model_and_tokenizer
    trained = dataclasses.replace(FAST, epochs=4, lr=3e-3)
    finetune_pos(model_dir, tok_dir, tmp_path / "out", trained, treebank=treebank)
    clean = _clean_scores(tmp_path / "out")
    assert clean["collapsed"] == 0.0
    assert clean["accuracy"] > clean["majority_accuracy"] + 0.2


def test_finetune_sentence_from_tsv(tmp_path, model_and_tokenizer):
    lines = read_nonblank_lines(EN, 80)
    rows = ["text\tlabel"] + [f"{line}\t{'long' if len(line) > 90 else 'short'}" for line in lines]
    (tmp_path / "train.tsv").write_text("\n".join(rows[:61]), encoding="utf-8")
    (tmp_path / "test.tsv").write_text("\n".join(rows[:1] + rows[61:]), encoding="utf-8")
    model_dir, tok_dir = model_and_tokenizer
    tsv = {"train": tmp_path / "train.tsv", "test": tmp_path / "test.tsv"}
    metrics = finetune_sentence(model_dir, tok_dir, tmp_path / "out", FAST, tsv=tsv)
    assert set(metrics["metric"]) == {"accuracy", "macro_f1", "majority_accuracy", "collapsed"}
    summary = json.loads((tmp_path / "out" / SUMMARY_FILE).read_text())
    assert summary["labels"] == ["long", "short"]
    assert summary["sizes"] == {"train": 54, "validation": 6, "test": 20}

    (tmp_path / "bad.tsv").write_text("text\tlabel\nsome text\tmedium\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match="label\\(s\\) not in the training data: medium"):
        finetune_sentence(
            model_dir, tok_dir, tmp_path / "bad", FAST, tsv={**tsv, "test": tmp_path / "bad.tsv"}
        )
    with pytest.raises(TokstudyError, match="exactly one of treebank or tsv"):
        finetune_sentence(model_dir, tok_dir, tmp_path / "x", FAST)


def test_characterbert_finetunes_with_one_unit_per_word(tmp_path):
    lines = read_nonblank_lines(MR, 60)
    words = sorted({w for line in lines for w in line.split()})
    speller = Speller(tuple(sorted({c for w in words for c in w})), 10)
    settings = model_settings(
        PretrainConfig(max_length=32),
        CharBertConfig(max_word_chars=10, filters=((1, 8), (2, 8))),
        speller,
        100,
    )
    torch.manual_seed(0)
    mlm = CharacterBertForMaskedLM(settings)
    mlm.save_pretrained(tmp_path / "model")
    speller.save(tmp_path / "model")
    model_dir = tmp_path / "model"
    tagger = family_of_model(model_dir).load_for_task(model_dir, "pos", ["NOUN", "VERB"])
    assert torch.equal(tagger.char_cnn.projection.weight, mlm.char_cnn.projection.weight)

    tokenizer = SpellingTokenizer(speller)
    [example] = tagging_examples(tokenizer, [lines[0].split()], [[0] * len(lines[0].split())], 64)
    assert len(example.input_ids) == len(lines[0].split()) + 2  # [CLS] words [SEP]
    assert example.input_ids[1] == tuple(speller.spell(lines[0].split()[0]).tolist())

    rows = ["text\tlabel"] + [f"{line}\t{'long' if len(line) > 60 else 'short'}" for line in lines]
    (tmp_path / "train.tsv").write_text("\n".join(rows[:41]), encoding="utf-8")
    (tmp_path / "test.tsv").write_text("\n".join(rows[:1] + rows[41:]), encoding="utf-8")
    tsv = {"train": tmp_path / "train.tsv", "test": tmp_path / "test.tsv"}
    metrics = finetune_sentence(tmp_path / "model", None, tmp_path / "out", FAST, tsv=tsv)
    assert metrics["value"].between(0, 1).all()
    predictions = pd.read_csv(tmp_path / "out" / PREDICTIONS_FILE, sep="\t")
    assert len(predictions) == 20
