"""The adapters of the tokenizer zoo against their libraries or a hand computation:
bpe_dropout, superbpe, morfessor, bpe_knockout, unigram_sampling, parity_bpe."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from conftest import SHARED, UD_ROOT, write_lines
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers
from workflow_support import snakemake

from tokstudy.corpora.prepare import CleaningStats, clean_lines
from tokstudy.corpora.ud import sentence_texts
from tokstudy.errors import TokstudyError
from tokstudy.files.lines import read_text_lines
from tokstudy.models.family import Bert, load_transformers_tokenizer, pretokenize_text
from tokstudy.models.tasks import _split_tokenizers
from tokstudy.tokenizers.adapters.knockout import knocked_out, merge_applications, surviving_merges
from tokstudy.tokenizers.adapters.superbpe import char_id, id_char
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, Tokenizer, TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.tokenizers.registry import adapter_class, load_tokenizer
from tokstudy.tokenizers.train_fraction import sampled_indices
from tokstudy.tokenizers.word_marks import METASPACE
from tokstudy.workflow.corpora.plan import chatterbot_files

SIZE = 400


#: Morfessor trained for 2 epochs (2 s instead of 15): the segmentation is the model's
#: whatever its training
MORFESSOR_SHORT = {"max_epochs": 2}


@cache
def _trained(name: str, corpus: Path, **params: object) -> Tokenizer:
    spec = TrainSpec(SIZE, dict(params), seed=7, label="en")
    return adapter_class(name).train(corpus, spec)


# --- bpe_dropout ----------------------------------------------------------------------


def test_bpe_dropout_without_dropout_is_plain_bpe(
    english_corpus: Path, english_lines: list[str]
) -> None:
    plain = _trained("hf_bpe", english_corpus)
    dropout = _trained("bpe_dropout", english_corpus, dropout=0.0)
    lines = english_lines[:200]
    assert dropout.vocab == plain.vocab
    assert dropout.encode_batch(lines) == plain.encode_batch(lines)
    wrapped = dropout.to_training_transformers()
    assert [wrapped(line)["input_ids"][1:-1] for line in lines] == plain.encode_batch(lines)


def test_bpe_dropout_samples_in_the_training_wrapper_only_and_round_trips(
    english_corpus: Path, english_lines: list[str], tmp_path: Path
) -> None:
    plain = _trained("hf_bpe", english_corpus)
    train_to_directory(
        "bpe_dropout", english_corpus, TrainSpec(SIZE, {"dropout": 0.5}, seed=7), tmp_path
    )
    dropout = load_tokenizer(tmp_path)
    lines = english_lines[:200]
    assert dropout.encode_batch(lines) == plain.encode_batch(lines)  # the metrics' encoding
    evaluation = dropout.to_transformers()
    assert [evaluation(line)["input_ids"][1:-1] for line in lines] == plain.encode_batch(lines)
    wrapped = dropout.to_training_transformers()
    sampled = [wrapped(line)["input_ids"][1:-1] for line in lines]
    assert sampled != plain.encode_batch(lines)
    assert sum(map(len, sampled)) > sum(map(len, plain.encode_batch(lines)))
    assert [dropout.decode(ids) for ids in sampled] == [
        plain.decode(ids) for ids in plain.encode_batch(lines)
    ]


@pytest.mark.parametrize("dropout", [1, 1.5, -0.1])
def test_bpe_dropout_outside_0_1_is_one_line(dropout: float, tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    with pytest.raises(TokstudyError, match=r"^tokenizers\.bpe_dropout\.params\.dropout: must"):
        adapter_class("bpe_dropout").train(corpus, TrainSpec(SIZE, {"dropout": dropout}))


# --- superbpe -------------------------------------------------------------------------


def _spans_a_space(token: str) -> bool:
    return METASPACE in token[1:]


def test_superbpe_stage_one_is_bpe_and_superwords_come_after_the_transition(
    english_corpus: Path, english_lines: list[str]
) -> None:
    superbpe = _trained("superbpe", english_corpus, transition=0.75)
    transition = round(0.75 * SIZE)
    stage_one = adapter_class("hf_bpe").train(english_corpus, TrainSpec(transition, seed=7))
    assert superbpe.vocab[:transition] == stage_one.vocab
    assert not any(map(_spans_a_space, superbpe.vocab[:transition]))
    assert any(map(_spans_a_space, superbpe.vocab[transition:]))
    used = {superbpe.vocab[i] for ids in superbpe.encode_batch(english_lines[:500]) for i in ids}
    assert any(map(_spans_a_space, used))
    lines = [line for line in english_lines[:500] if "  " not in line and line == line.strip()]
    assert [superbpe.decode(ids) for ids in superbpe.encode_batch(lines)] == [
        stage_one.decode(ids) for ids in stage_one.encode_batch(lines)
    ]


def test_superbpe_with_transition_1_is_plain_bpe(
    english_corpus: Path, english_lines: list[str]
) -> None:
    """Why a study may not ask for ``transition: 1``: its second stage learns nothing (the
    algorithm run directly, past the parameter check)."""
    spec = TrainSpec(SIZE, {"transition": 1.0, "min_frequency": 0}, seed=7, label="en")
    superbpe = adapter_class("superbpe").fit(english_corpus, spec)
    plain = _trained("hf_bpe", english_corpus)
    assert superbpe.vocab == plain.vocab
    assert superbpe.encode_batch(english_lines[:300]) == plain.encode_batch(english_lines[:300])


@given(st.integers(0, 2 * 0xFFFE - 1))
def test_superbpe_spells_every_stage_one_id_as_one_character(token_id: int) -> None:
    assert char_id(id_char(token_id)) == token_id


@pytest.mark.parametrize("transition", [0, 1, 1.5])
def test_superbpe_transition_outside_0_1_is_one_line(tmp_path: Path, transition: float) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    with pytest.raises(TokstudyError, match=r"^tokenizers\.superbpe\.params\.transition: must"):
        adapter_class("superbpe").train(corpus, TrainSpec(SIZE, {"transition": transition}))


# --- morfessor ------------------------------------------------------------------------


def test_morfessor_segments_as_the_packages_own_viterbi(
    english_corpus: Path, english_lines: list[str]
) -> None:
    tokenizer = _trained("morfessor", english_corpus, **MORFESSOR_SHORT)
    vocab = set(tokenizer.vocab)
    words = sorted({word for line in english_lines[:300] for word in line.split()})
    for word in words:
        morphs, _ = tokenizer.model.viterbi_segment(METASPACE + word, maxlen=30)
        expected = [
            piece
            for morph in morphs
            for piece in ([morph] if morph in vocab else [c if c in vocab else UNK for c in morph])
        ]
        assert tokenizer.tokenize(word) == expected
    # the lexicon's most frequent morphs are in the vocabulary: it is not all characters
    assert sum(len(token) > 1 and token not in SPECIAL_TOKENS for token in tokenizer.vocab) > 100


def test_morfessor_writes_unseen_characters_as_unk(english_corpus: Path) -> None:
    tokenizer = _trained("morfessor", english_corpus, **MORFESSOR_SHORT)
    ids = tokenizer.encode("hello жж")
    assert ids.count(tokenizer.unk_id) == 2
    assert tokenizer.decode(ids) == "hello \ufffd\ufffd"
    starts = tokenizer.encode_batch_with_offsets(["hello жж"])[0].offsets
    assert [start for start, _ in starts][-2:] == [6, 7]


def test_morfessor_missing_is_one_line_naming_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "morfessor", None)
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    with pytest.raises(TokstudyError, match=r"^morfessor: the Python package 'morfessor' is not"):
        adapter_class("morfessor").train(corpus, TrainSpec(SIZE))


# --- parity_bpe -----------------------------------------------------------------------


def _mixed(tmp_path: Path) -> tuple[Path, Path, dict[str, list[str]]]:
    texts = {
        language: list(clean_lines(chatterbot_files(folder), language, "error", CleaningStats()))
        for language, folder in (("de", "german"), ("en", "english"))
    }
    order = [(language, line) for language in ("en", "de") for line in texts[language]]
    order = order[::2] + order[1::2]  # interleaved: the grouping must undo it
    corpus = write_lines(tmp_path / "mix.txt", [line for _, line in order])
    languages = write_lines(tmp_path / "languages.txt", [language for language, _ in order])
    grouped = {
        language: [line for code, line in order if code == language] for language in ("de", "en")
    }
    return corpus, languages, grouped


def _library_merges(grouped: dict[str, list[str]], size: int, **balance: object) -> list[list[str]]:
    tokenizer = HFTokenizer(models.BPE(unk_token=UNK))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE)
    trainer = trainers.ParityBpeTrainer(
        num_merges=size, total_symbols=True, special_tokens=list(SPECIAL_TOKENS)
    )
    trainer.train_from_iterator(tokenizer, [iter(grouped["de"]), iter(grouped["en"])], **balance)
    return json.loads(tokenizer.to_str())["model"]["merges"]


def _merges(tokenizer: Tokenizer) -> list[list[str]]:
    return json.loads(tokenizer._tokenizer.to_str())["model"]["merges"]


def test_parity_bpe_is_the_librarys_trainer_on_each_languages_lines(tmp_path: Path) -> None:
    corpus, languages, grouped = _mixed(tmp_path)
    params = {"languages_file": str(languages), "ratio": {"en": 1.0, "de": 1.3}}
    tokenizer = adapter_class("parity_bpe").train(corpus, TrainSpec(600, params, label="de+en"))
    assert len(tokenizer.vocab) == 600
    assert _merges(tokenizer) == _library_merges(grouped, 600, ratio=[1.3, 1.0])
    assert _merges(tokenizer) != _library_merges(grouped, 600, ratio=[1.0, 1.0])


@pytest.mark.shared
def test_parity_bpe_balances_on_the_parallel_pud_sentences(tmp_path: Path) -> None:
    corpus, languages, grouped = _mixed(tmp_path)
    params = {"languages_file": str(languages), "dev_pud_root": str(UD_ROOT)}
    tokenizer = adapter_class("parity_bpe").train(corpus, TrainSpec(600, params, label="de+en"))
    texts = {
        language: sentence_texts(next((UD_ROOT / folder).glob("*pud-ud-test.conllu*")))
        for language, folder in (("de", "UD_German-PUD"), ("en", "UD_English-PUD"))
    }
    ids = sorted(set(texts["de"]) & set(texts["en"]))
    dev = [iter([texts[language][i] for i in ids]) for language in ("de", "en")]
    assert _merges(tokenizer) == _library_merges(grouped, 600, dev_iterators=dev)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, r"^tokenizers\.parity_bpe\.params: a parity-aware tokenizer needs a parallel dev"),
        ({"ratio": {"de": 1}}, r"^tokenizers\.parity_bpe\.params\.ratio: no ratio for en$"),
    ],
)
def test_parity_bpe_without_a_balance_is_one_line(
    tmp_path: Path, params: dict, message: str
) -> None:
    corpus, languages, _ = _mixed(tmp_path)
    spec = TrainSpec(600, {"languages_file": str(languages), **params}, label="de+en")
    with pytest.raises(TokstudyError, match=message):
        adapter_class("parity_bpe").train(corpus, spec)


def test_parity_bpe_languages_file_must_match_the_lines(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b", "c d"])
    languages = write_lines(tmp_path / "l.txt", ["en"])
    spec = TrainSpec(50, {"languages_file": str(languages), "ratio": {"en": 1}})
    with pytest.raises(TokstudyError, match=r"l\.txt: 1 language codes for 2 lines of .*c\.txt$"):
        adapter_class("parity_bpe").train(corpus, spec)


@pytest.mark.slow
@pytest.mark.shared
def test_parity_bpe_beside_temperature_sampled_bpe_in_the_multilingual_and_pud_tables(
    tmp_path: Path,
) -> None:
    config = {
        "seed": 3,
        "corpus_defaults": {"heldout": 0.1, "max_lines": 600},
        "languages": {"en": {"chatterbot": "english"}, "de": {"chatterbot": "german"}},
        "tokenizers": {"parity_bpe": {"params": {"dev_udhr_root": str(SHARED / "udhr")}}},
        "vocab_sizes": [300],
        "metrics": ["mu"],
        "analyses": {
            "parity": {"pud_root": str(UD_ROOT), "reference": "en", "languages": ["de"]},
            "multilingual": {"tokenizers": ["hf_bpe", "parity_bpe"], "vocab_sizes": [400]},
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", "analysis_outputs", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    meta = json.loads((results / "multilingual/tokenizers/parity_bpe/400/meta.json").read_text())
    assert meta["vocab_size"] == 400
    assert meta["params"]["languages_file"].endswith("multilingual/corpus/languages.txt")
    tables = results / "tables/analysis"
    fertility = pd.read_csv(tables / "multilingual_fertility.csv")
    assert set(fertility["tokenizer"]) == {"hf_bpe", "parity_bpe"}
    labels = {"hf_bpe 400 (de+en)", "parity_bpe 400 (de+en)", "parity_bpe 300"}
    premiums = pd.read_csv(tables / "parity_pud.csv")
    assert set(premiums["tokenizer"]) == labels
    fairness = pd.read_csv(tables / "parity_pud_fairness.csv").set_index("tokenizer")
    assert set(fairness.index) == labels and fairness["gini"].between(0, 1).all()


# --- bpe_knockout ---------------------------------------------------------------------

HAND_MERGES = [("a", "b"), ("b", "c"), ("ab", "c"), ("x", "y")]
#: abc = a|bc (3 times), abx = abx (once): (a, b) joins across a boundary in 3 of 4
HAND_LEXICON = {"abc": (3, frozenset({1})), "abx": (1, frozenset())}


def test_knockout_applies_merges_in_rank_order_like_bpe() -> None:
    ranks = {merge: rank for rank, merge in enumerate(HAND_MERGES)}
    assert list(merge_applications("abc", ranks)) == [(0, 1), (2, 2)]
    assert list(merge_applications("abab", ranks)) == [(0, 1), (0, 3)]
    assert list(merge_applications("xbc", ranks)) == [(1, 2)]


def test_knockout_removes_merges_that_cut_morphs_and_those_that_used_them() -> None:
    assert knocked_out(HAND_MERGES, HAND_LEXICON, 0.5) == {0}
    assert knocked_out(HAND_MERGES, HAND_LEXICON, 0.8) == set()
    # (ab, c) never disagrees but used the knocked-out ab; (x, y) never applied: kept
    assert surviving_merges(HAND_MERGES, {0}) == [("b", "c"), ("x", "y")]


def test_bpe_knockout_keeps_bpes_merges_in_order_but_the_knocked_out(
    english_corpus: Path,
) -> None:
    knockout = _trained("bpe_knockout", english_corpus)
    larger = adapter_class("hf_bpe").train(english_corpus, TrainSpec(round(1.25 * SIZE), seed=7))
    kept, merges = _merges(knockout), _merges(larger)
    assert len(knockout.vocab) == SIZE
    positions = [merges.index(merge) for merge in kept]
    assert positions == sorted(positions)
    assert kept != _merges(_trained("hf_bpe", english_corpus))  # some were knocked out


# --- unigram_sampling -----------------------------------------------------------------


def test_unigram_sampling_is_sp_unigram_but_in_the_training_wrapper(
    english_corpus: Path, english_lines: list[str], tmp_path: Path
) -> None:
    viterbi = _trained("sp_unigram", english_corpus)
    spec = TrainSpec(SIZE, {"alpha": 0.2, "nbest_size": -1}, seed=7)
    train_to_directory("unigram_sampling", english_corpus, spec, tmp_path)
    sampled = load_tokenizer(tmp_path)
    lines = english_lines[:200]
    assert sampled.vocab == viterbi.vocab
    assert sampled.encode_batch(lines) == viterbi.encode_batch(lines)
    evaluation = sampled.to_transformers()
    assert [evaluation(line)["input_ids"][1:-1] for line in lines] == viterbi.encode_batch(lines)
    wrapped = sampled.to_training_transformers()
    draws = [wrapped(line)["input_ids"][1:-1] for line in lines]
    assert draws != viterbi.encode_batch(lines)
    assert [sampled.decode(ids) for ids in draws] == [
        viterbi.decode(ids) for ids in viterbi.encode_batch(lines)
    ]


@pytest.mark.parametrize("name", ["bpe_dropout", "unigram_sampling"])
def test_the_model_stage_trains_on_samples_and_evaluates_the_deterministic_encoding(
    name: str, english_corpus: Path, english_lines: list[str], tmp_path: Path
) -> None:
    train_to_directory(name, english_corpus, TrainSpec(SIZE, seed=7), tmp_path)
    deterministic = load_tokenizer(tmp_path).encode_batch(english_lines[:100])

    def encoded(tokenizer: Any) -> list[list[int]]:
        return [tokenizer(line)["input_ids"][1:-1] for line in english_lines[:100]]

    assert encoded(load_transformers_tokenizer(tmp_path)) == deterministic  # held-out scoring
    assert encoded(load_transformers_tokenizer(tmp_path, training=True)) != deterministic
    split_tokenizers = _split_tokenizers(Bert(), tmp_path / "model", tmp_path)  # fine-tuning
    assert encoded(split_tokenizers["validation"]) == deterministic
    assert encoded(split_tokenizers["test"]) == deterministic
    assert encoded(split_tokenizers["train"]) != deterministic


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("bpe_dropout", {"method": "bpe_dropout", "dropout": 0.1, "seeded": False}),
        (
            "unigram_sampling",
            {"method": "unigram_sampling", "alpha": 0.1, "nbest_size": -1, "seeded": False},
        ),
        ("hf_bpe", None),
    ],
)
def test_a_model_corpus_records_and_logs_that_it_is_a_sample(
    name: str,
    settings: dict[str, Any] | None,
    english_corpus: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    train_to_directory(name, english_corpus, TrainSpec(SIZE, seed=7), tmp_path / "tokenizer")
    with caplog.at_level("WARNING"):
        pretokenize_text(
            tmp_path / "tokenizer", english_corpus, tmp_path / "corpus", whole_word_mask=False
        )
    record = json.loads((tmp_path / "corpus" / "corpus.json").read_text(encoding="utf-8"))
    assert record["sampled_segmentation"] == settings
    warned = [r.getMessage() for r in caplog.records if "sampled segmentation" in r.getMessage()]
    assert len(warned) == (1 if settings else 0)
    assert not settings or "unseeded: another run draws other samples" in warned[0]


@pytest.mark.parametrize("nbest_size", [0, 1, -2])
def test_unigram_sampling_needs_a_sampling_nbest_size(nbest_size: int, tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["a b c"])
    with pytest.raises(TokstudyError, match=r"^tokenizers\.unigram_sampling\.params\.nbest_size"):
        adapter_class("unigram_sampling").train(corpus, TrainSpec(SIZE, {"nbest_size": nbest_size}))


# --- in a study ------------------------------------------------------------------------

ZOO = ["bpe_dropout", "superbpe", "morfessor", "parity_bpe", "bpe_knockout", "unigram_sampling"]


@pytest.mark.slow
def test_the_new_tokenizers_go_through_a_study_like_the_others(tmp_path: Path) -> None:
    config = {
        "seed": 5,
        "size_policy": "adjust",
        "corpus_defaults": {"heldout": 0.1, "max_lines": 400},
        "languages": {"en": {"chatterbot": "english"}, "fa": {"chatterbot": "persian"}},
        "vocab_sizes": [300],
        "tokenizers": {
            "hf_bpe": {},
            **{name: {} for name in ZOO},
            "parity_bpe": {"params": {"ratio": {"en": 1.0, "fa": 1.0}}},
        },
        "metrics": ["fertility", "bytes_per_token", "mu"],
        "plots": {"frequency_vocab_size": 300, "skip_top_ranks": 10},
        "analyses": {
            "segmentation": {"vocab_size": 300, "words": {"en": ["computers"], "fa": ["کامپیوتر"]}}
        },
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = snakemake(tmp_path, "--cores", "2", config=path)
    assert result.returncode == 0, result.stderr[-3000:]
    results = tmp_path / "results"
    metrics = pd.read_csv(results / "tables/metrics.csv")
    assert set(ZOO) <= set(metrics["tokenizer"]) and set(metrics["language"]) == {"en", "fa"}
    for language in ("en", "fa"):
        segmentation = (results / f"tables/analysis/segmentation_{language}.csv").read_text()
        assert all(name in segmentation for name in ZOO)
    page = (results / "index.html").read_text(encoding="utf-8")
    start = page.index('id="study-data">') + len('id="study-data">')
    cells = json.loads(page[start : page.index("</script>", start)])["cells"]
    assert len(cells) == 2 * (len(ZOO) + 1)


def test_morfessor_min_count_trains_on_the_frequent_word_types_only(tmp_path: Path) -> None:
    corpus = write_lines(tmp_path / "c.txt", ["walking talking", "walking walked", "talked"])
    spec = TrainSpec(60, {"min_count": 2}, seed=7, size_policy="adjust")
    tokenizer = adapter_class("morfessor").train(corpus, spec)
    assert sorted(tokenizer.model.get_compounds()) == ["▁walking"]
    assert tokenizer.decode(tokenizer.encode("talked walking")) == "talked walking"


@pytest.mark.parametrize(("fraction", "cap"), [(0.5, None), (1.0, 30), (0.5, 1000)])
def test_parity_bpe_draws_its_share_from_lines_and_languages_alike(
    tmp_path: Path, fraction: float, cap: int | None
) -> None:
    corpus, languages, _ = _mixed(tmp_path)
    lines, codes = read_text_lines(corpus), read_text_lines(languages)
    kept = sampled_indices(len(lines), fraction, 7, cap)
    assert len(kept) < len(lines)
    sampled = {
        language: [lines[i] for i in kept if codes[i] == language] for language in ("de", "en")
    }
    params = {"languages_file": str(languages), "ratio": {"en": 1.0, "de": 1.0}}
    spec = TrainSpec(
        500, params, seed=7, label="de+en", train_fraction=fraction, max_train_lines=cap
    )
    tokenizer = adapter_class("parity_bpe").train(corpus, spec)
    assert _merges(tokenizer) == _library_merges(sampled, 500, ratio=[1.0, 1.0])
