"""NMT end to end on real en–mr text: detokenization round trip, a tiny run, resume, report."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import itertools
import json
import math
import shutil
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
import torch
from conftest import SHARED, write_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import MarianMTModel

from tokstudy.errors import TokstudyError
from tokstudy.nmt import runs
from tokstudy.nmt.config import DecodeConfig, EvaluationConfig, SplitConfig, TrainConfig
from tokstudy.nmt.data import joint_training_text, read_split, split_corpus
from tokstudy.nmt.report import write_report
from tokstudy.nmt.scoring import corpus_scores, detokenize, score_run
from tokstudy.nmt.train import MODEL_DIR, SUMMARY_FILE, NmtTask, train_translation_model
from tokstudy.tokenizers.base import Tokenizer, TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.registry import adapter_class, load_tokenizer
from tokstudy.training.core import CHECKPOINT_FILE, LOG_FILE

pytestmark = pytest.mark.shared


LINES = 520


def _head(language: str, n: int) -> list[str]:
    path = SHARED / "corpora" / "hft2022" / f"{language}.txt.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [line.strip() for line in itertools.islice(handle, n)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The first lines of the aligned en and mr corpora."""
    directory = tmp_path_factory.mktemp("nmt_corpus")
    return {lang: write_lines(directory / lang, _head(lang, LINES)) for lang in ("en", "mr")}


@pytest.fixture(scope="module")
def tokenizers(corpus: dict[str, Path]) -> dict[tuple[str, str], Tokenizer]:
    """sp_bpe and hft trained on each language's lines."""
    return {
        (name, lang): adapter_class(name).train(path, TrainSpec(vocab_size=600, threads=1))
        for name in ("sp_bpe", "hft")
        for lang, path in corpus.items()
    }


def _in_sentencepiece_normal_form(line: str) -> bool:
    """NFKC, single spaces and no format characters (such as zero-width spaces)."""
    return (
        unicodedata.normalize("NFKC", line) == line
        and " ".join(line.split()) == line
        and all(unicodedata.category(character) != "Cf" for character in line)
    )


@pytest.mark.parametrize("language", ["en", "mr"])
def test_detokenized_references_round_trip(
    corpus: dict[str, Path], tokenizers: dict, language: str
) -> None:
    lines = corpus[language].read_text(encoding="utf-8").splitlines()
    hft = tokenizers["hft", language]
    assert hft.lossless
    assert detokenize(hft, hft.encode_batch(lines)) == lines
    assert corpus_scores(detokenize(hft, hft.encode_batch(lines)), lines)["bleu"] == pytest.approx(
        100
    )
    sp_bpe = tokenizers["sp_bpe", language]
    normal = [line for line in lines if _in_sentencepiece_normal_form(line)]
    assert len(normal) > 0.9 * len(lines)
    assert detokenize(sp_bpe, sp_bpe.encode_batch(normal)) == normal


def test_sentencepiece_normalization_is_what_breaks_its_round_trip(tokenizers: dict) -> None:
    sp_bpe = tokenizers["sp_bpe", "en"]
    reference = "A fire broke out,\xa0the  hospital was closed."
    assert detokenize(sp_bpe, [sp_bpe.encode(reference)]) == [" ".join(reference.split())]


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_round_trip_of_sentences_made_of_training_words(
    corpus: dict[str, Path], tokenizers: dict, data: st.DataObject
) -> None:
    language = data.draw(st.sampled_from(["en", "mr"]))
    words = sorted(
        {
            word
            for line in corpus[language].read_text(encoding="utf-8").splitlines()
            for word in line.split()
            if _in_sentencepiece_normal_form(word)
        }
    )
    sentence = " ".join(data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=12)))
    for name in ("sp_bpe", "hft"):
        tokenizer = tokenizers[name, language]
        assert detokenize(tokenizer, [tokenizer.encode(sentence)]) == [sentence]


@pytest.mark.slow
def test_tiny_en_mr_run_trains_translates_scores_and_reports(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    split_dir = tmp_path / "split"
    split_corpus([corpus["en"], corpus["mr"]], ("en", "mr"), split_dir, SplitConfig(20, 20, seed=1))
    tokenizer_dirs = {}
    for language in ("en", "mr"):
        tokenizer_dirs[language] = tmp_path / f"sp_bpe_{language}"
        spec = TrainSpec(vocab_size=400, threads=1, label=language)
        train_to_directory(
            "sp_bpe", split_dir / f"train.{language}", spec, tokenizer_dirs[language]
        )
    run_dir = tmp_path / "run"
    config = TrainConfig(
        max_steps=150, eval_every=50, warmup_steps=30, lr=2e-3, max_tokens=512, max_length=128
    )
    summary = runs.train(
        split_dir, "en-mr", tokenizer_dirs["en"], tokenizer_dirs["mr"], run_dir, config
    )
    assert json.loads((run_dir / SUMMARY_FILE).read_text()) == json.loads(json.dumps(summary))
    assert summary["steps"] == 150 and not summary["joint_vocabulary"]
    # the data for its size: the target tokens of the kept pairs, by their own tokenizer
    targets = [line for _, line in read_split(split_dir, "train", ("en", "mr"))]
    mr = load_tokenizer(tokenizer_dirs["mr"])
    assert summary["training_tokens"] <= sum(map(len, mr.encode_batch(targets)))
    assert 0 < summary["unique_training_tokens"] <= 400
    assert summary["tokens_per_parameter"] == pytest.approx(
        summary["training_tokens"] / summary["non_embedding_parameters"]
    )
    with (run_dir / LOG_FILE).open() as handle:
        log = list(csv.DictReader(handle))
    assert [int(row["step"]) for row in log] == [50, 100, 150]
    losses = [float(row["loss"]) for row in log]
    assert losses[-1] < losses[0] - 0.3
    assert all(float(row["tokens_per_s"]) > 0 for row in log)
    assert (run_dir / MODEL_DIR / "config.json").is_file()

    hypotheses = runs.translate_split(
        run_dir,
        split_dir,
        "en-mr",
        tokenizer_dirs["en"],
        tokenizer_dirs["mr"],
        tmp_path / "test.hyp",
        DecodeConfig(beam_size=2, max_length_b=5),
    )
    assert len(hypotheses.read_text(encoding="utf-8").splitlines()) == 20
    scores = []
    for tokenizer, path in (("sp_bpe", hypotheses), ("hft", split_dir / "test.mr")):
        scores.append(tmp_path / f"{tokenizer}.json")
        result = score_run(
            path,
            split_dir,
            "en-mr",
            tokenizer_dirs["mr"],
            scores[-1],
            tokenizer=tokenizer,
            size="400",
            seed=1,
        )
        assert math.isfinite(result["bleu"]) and math.isfinite(result["chrf"])
        assert result["bleu_signature"].startswith("nrefs:1")
        assert 0.9 <= result["reference_roundtrip_exact"] <= 1
        assert math.isfinite(result["bleu_on_tokens"])
    assert result["bleu"] == pytest.approx(100)  # the references themselves, scored as "hft"
    assert result["bleu_on_tokens"] == pytest.approx(100)

    written = write_report(scores, tmp_path / "report", EvaluationConfig())
    table = pd.read_csv(written["table1_bleu.csv"])
    assert list(table.system) == ["sp_bpe (400)", "hft (400)"]
    assert table["increment"].iloc[1] > 0
    significance = pd.read_csv(written["significance"])
    assert list(significance.metric) == ["bleu", "chrf"] and significance.p_value.max() < 0.05
    qualitative = written["qualitative"].read_text(encoding="utf-8")
    assert "en-mr, size 400, seed 1: hft vs sp_bpe" in qualitative
    assert "in favour of hft" in qualitative


def test_same_tokenizer_folder_for_both_sides_is_a_joint_vocabulary(
    tmp_path: Path, corpus: dict[str, Path]
) -> None:
    split_dir = tmp_path / "split"
    split_corpus([corpus["en"], corpus["mr"]], ("en", "mr"), split_dir, SplitConfig(10, 10))
    text = joint_training_text(split_dir, ("en", "mr"), tmp_path / "joint.txt")
    lines = text.read_text(encoding="utf-8").split("\n")
    train = read_split(split_dir, "train", ("en", "mr"))
    assert lines == [en for en, _ in train] + [mr for _, mr in train] + [""]
    assert len(lines) == 2 * 499 + 1 and lines[0].isascii() and not lines[-2].isascii()
    folder = tmp_path / "joint"
    train_to_directory("sp_bpe", text, TrainSpec(vocab_size=300, threads=1), folder)
    source, target = runs.load_tokenizers(folder, folder / ".." / "joint")
    assert source is target


class Interrupted(Exception):
    """Stands for a kill in the middle of training."""


RESUME_CONFIG = TrainConfig(
    max_steps=10, eval_every=4, warmup_steps=3, lr=2e-3, max_tokens=256, max_length=64
)


def _pairs(corpus: dict[str, Path], start: int, stop: int) -> list[tuple[str, str]]:
    sides = [corpus[lang].read_text(encoding="utf-8").splitlines() for lang in ("en", "mr")]
    return list(zip(*sides, strict=True))[start:stop]


def _train(corpus, tokenizers, run_dir: Path, config: TrainConfig = RESUME_CONFIG, **kwargs):
    return train_translation_model(
        tokenizers["sp_bpe", "en"],
        tokenizers["sp_bpe", "mr"],
        _pairs(corpus, 0, 200),
        _pairs(corpus, 200, 210),
        run_dir,
        config,
        **kwargs,
    )


def _log(run_dir: Path) -> pd.DataFrame:
    timing = ["tokens_per_s", "flops_per_s", "mfu", "elapsed_s"]
    return pd.read_csv(run_dir / LOG_FILE).drop(columns=timing)


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    [RESUME_CONFIG, dataclasses.replace(RESUME_CONFIG, pad_to_multiple=8, cuda_graphs=True)],
    ids=["token budget", "fixed shapes"],
)
def test_resume_after_kill_matches_uninterrupted_run(
    tmp_path: Path, corpus: dict[str, Path], tokenizers: dict, config: TrainConfig
) -> None:
    straight = _train(corpus, tokenizers, tmp_path / "straight", config)

    def kill_at_step_7(step: int) -> None:
        if step == 7:
            raise Interrupted

    run = tmp_path / "killed"
    with pytest.raises(Interrupted):
        _train(corpus, tokenizers, run, config, on_step=kill_at_step_7)
    assert torch.load(run / CHECKPOINT_FILE, weights_only=True)["step"] == 4
    assert list(_log(run)["step"]) == [4]
    resumed = _train(corpus, tokenizers, run, config)

    assert not (run / CHECKPOINT_FILE).exists()
    pd.testing.assert_frame_equal(_log(run), _log(tmp_path / "straight"))
    assert list(_log(run)["step"]) == [4, 8, 10]
    a = MarianMTModel.from_pretrained(tmp_path / "straight" / MODEL_DIR).state_dict()
    b = MarianMTModel.from_pretrained(run / MODEL_DIR).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ignored = {"seconds", "device", "tokens_per_s", "flops_per_s", "mfu"}
    assert {k: v for k, v in resumed.items() if k not in ignored} == {
        k: v for k, v in straight.items() if k not in ignored
    }


def _falling_dev_scores(self: NmtTask, model: torch.nn.Module, step: int) -> tuple[dict, float]:
    """Dev scores that only fall: the first evaluation stays the best."""
    self.scores = {"chrf": 100.0 - step, "bleu": 0.0, "chrf_signature": "fixed"}
    return {"dev_chrf": 100.0 - step, "dev_bleu": 0.0}, 100.0 - step


@pytest.mark.slow
def test_the_best_model_survives_a_kill_after_the_checkpoint_that_follows_it(
    tmp_path: Path, corpus: dict[str, Path], tokenizers: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best model of step 4 is kept beside the checkpoint, not only in the run folder
    that Snakemake deletes after the kill at step 6: the resumed run, which never beats it,
    still ends with it."""
    monkeypatch.setattr(NmtTask, "evaluate", _falling_dev_scores)
    config = dataclasses.replace(RESUME_CONFIG, max_steps=8)
    straight = tmp_path / "straight"
    _train(corpus, tokenizers, straight, config, checkpoint_root=tmp_path / "straight_state")
    run, state = tmp_path / "run", tmp_path / "state"
    with pytest.raises(Interrupted):
        _train(corpus, tokenizers, run, config, checkpoint_root=state, on_step=_stop_at(6))
    shutil.rmtree(run)  # what Snakemake does with a failed job's outputs
    summary = _train(corpus, tokenizers, run, config, checkpoint_root=state)
    assert summary["best_step"] == 4
    a = MarianMTModel.from_pretrained(straight / MODEL_DIR).state_dict()
    b = MarianMTModel.from_pretrained(run / MODEL_DIR).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert list(_log(run)["step"]) == [4, 8]


def _stop_at(stop: int):
    def on_step(step: int) -> None:
        if step == stop:
            raise Interrupted

    return on_step


def test_checkpoint_of_other_training_data_is_refused(
    tmp_path: Path, corpus: dict[str, Path], tokenizers: dict
) -> None:
    run = tmp_path / "run"
    with pytest.raises(Interrupted):
        _train(corpus, tokenizers, run, on_step=lambda step: step == 5 and _raise())
    with pytest.raises(TokstudyError, match="different training settings"):
        train_translation_model(
            tokenizers["sp_bpe", "en"],
            tokenizers["sp_bpe", "mr"],
            _pairs(corpus, 0, 150),
            _pairs(corpus, 200, 210),
            run,
            RESUME_CONFIG,
        )


def _raise() -> None:
    raise Interrupted
