"""Model stage: config parsing, memmap corpora, block sampling and MLM masking."""

from __future__ import annotations

import copy
import gzip

import numpy as np
import pytest
import torch
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.errors import TokstudyError
from tokstudy.files.disk_array import DiskArray
from tokstudy.files.lines import iter_nonblank_lines, iter_shard_lines, read_nonblank_lines
from tokstudy.models.config import ModelsConfig, PretrainConfig, from_mapping
from tokstudy.models.data import (
    BlockSampler,
    Chunk,
    TokenCorpus,
    batch_encoder,
    gather_blocks,
    merge_corpora,
    pretokenize,
    with_cls_sep,
    write_corpus,
)
from tokstudy.models.family import load_transformers_tokenizer
from tokstudy.models.fast_transformers_tokenizer import train_wordpiece
from tokstudy.models.masking import Masker
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.build import train_to_directory
from tokstudy.training.data_fit import unit_counts

pytestmark = [pytest.mark.shared, pytest.mark.usefixtures("one_torch_thread")]


EN = SHARED / "corpora" / "hft2022" / "en.txt.gz"


@pytest.fixture(scope="module")
def english() -> list[str]:
    return read_nonblank_lines(EN, 300)


@pytest.fixture(scope="module")
def tokenizer(english):
    return train_wordpiece(english, 400)


# --- config -------------------------------------------------------------------------


def test_config_from_mapping_coerces_and_nests():
    config = from_mapping(
        ModelsConfig,
        {
            "seeds": [1, 2],
            "tasks": ["mlm", "pos"],
            "pretrain": {"preset": "small", "lr": 1},
            "characterbert": {"filters": [[1, 8], [2, 8]]},
            "evaluation": {"noise_levels": [10, 20]},
        },
    )
    assert config.seeds == (1, 2)
    assert config.pretrain.lr == 1.0 and isinstance(config.pretrain.lr, float)
    assert config.characterbert.filters == ((1, 8), (2, 8))
    assert config.evaluation.noise_levels == (10, 20)
    assert config.finetune.epochs == 3


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"pretrain": {"stpes": 3}}, "models.pretrain: unknown key(s) stpes"),
        ({"pretrain": {"steps": "many"}}, "models.pretrain.steps: expected an integer"),
        ({"pretrain": {"preset": "huge"}}, "preset must be one of tiny, small, base"),
        ({"pretrain": {"device": "tpu"}}, "device must be one of"),
        ({"tasks": ["mlm", "ner"]}, "tasks must be one of"),
        ({"seeds": 3}, "models.seeds: expected a list"),
        ({"evaluation": {"noise_levels": [150]}}, "150 is not a percentage"),
        ({"pretrain": {"whole_word_mask": "yes"}}, "expected true/false"),
        ({"characterbert": {"word_vocab_size": 3}}, "models.characterbert.word_vocab_size must"),
        ({"characterbert": {"max_word_chars": 4}}, "models.characterbert.max_word_chars (4)"),
        ({"characterbert": {"filters": [[2]]}}, "models.characterbert.filters must be"),
        ({"characterbert": 5}, "models.characterbert: expected a mapping"),
        ({"sentence_tsv": {"de": {"train": "a"}}}, "models.sentence_tsv.de: missing key(s) test"),
        ({"sentence_tsv": {"de": {"train": "a", "test": "b", "dev": "c"}}}, "unknown key(s) dev"),
        (
            {"tasks": ["mlm", "pos"], "pretrain": {"max_length": 32}},
            "models.finetune.max_length (128) exceeds models.pretrain.max_length (32)",
        ),
        ({"pretrain": {"compile": "yes"}}, "models.pretrain.compile: expected true/false"),
    ],
)
def test_config_errors_name_the_key(data, message):
    with pytest.raises(TokstudyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_mapping(ModelsConfig, data)


# --- corpora on disk -----------------------------------------------------------------


def test_pretokenize_round_trip(tmp_path, english, tokenizer):
    text = tmp_path / "train.txt.gz"
    with gzip.open(text, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(english[:50]) + "\n\n")  # blank line skipped
    corpus = pretokenize(tokenizer, text, tmp_path / "corpus", with_char_spans=True, chunk_lines=7)
    reopened = TokenCorpus.open(tmp_path / "corpus")
    assert reopened.n_lines == 50
    assert isinstance(reopened.ids, DiskArray) and reopened.ids.dtype == np.uint16
    for index in (0, 6, 7, 49):
        expected = tokenizer(english[index], add_special_tokens=False)["input_ids"]
        assert reopened.line(index).tolist() == expected
    spans = reopened.arrays["char_spans"]
    first = corpus.line_offsets[3]
    start, end = spans[first]
    token = tokenizer.convert_ids_to_tokens(int(reopened.ids[first]))
    assert english[3][start:end] == token.removeprefix("##")
    assert not (tmp_path / "corpus.tmp").exists()


def test_the_fast_batch_encode_gives_the_tokenizers_ids(english, tokenizer):
    expected = tokenizer(english[:40], add_special_tokens=False)["input_ids"]
    assert batch_encoder(tokenizer)(english[:40]) == (expected, None)
    ids, spans = batch_encoder(tokenizer, with_char_spans=True)(english[:40])
    assert ids == expected and [len(s) for s in spans] == [len(i) for i in ids]
    truncating = copy.deepcopy(tokenizer)
    truncating.backend_tokenizer.enable_truncation(5)  # the call turns it off, so must we
    assert batch_encoder(truncating)(english[:40])[0] == expected


@pytest.mark.parametrize("shards", [2, 3, 7])
def test_shards_pretokenized_apart_and_merged_are_the_whole_corpus(
    tmp_path, english, tokenizer, shards
):
    text = tmp_path / "train.txt"
    text.write_text("\n\n".join(english[:60]) + "\n", encoding="utf-8")  # with blank lines
    pretokenize(tokenizer, text, tmp_path / "whole", with_char_spans=True, chunk_lines=9)
    parts = [tmp_path / f"part{k}" for k in range(shards)]
    for k, part in enumerate(parts):
        pretokenize(tokenizer, text, part, with_char_spans=True, chunk_lines=9, shard=(k, shards))
    assert sum(TokenCorpus.open(part).n_lines for part in parts) == 60
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("tokstudy.models.data.COUNT_CHUNK", 4)  # offsets copied in pieces
        merge_corpora(parts, tmp_path / "merged")
    for name in ("ids.bin", "char_spans.bin", "line_offsets.npy", "corpus.json"):
        assert (tmp_path / "merged" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    wrong = rf"part1: shard 1 of {shards}, expected shard 0 of {shards}"
    with pytest.raises(TokstudyError, match=wrong):
        merge_corpora(parts[1:] + parts[:1], tmp_path / "bad")
    pretokenize(train_wordpiece(english, 300), text, tmp_path / "other", shard=(1, shards))
    other = r"other: not a shard of .*part0's corpus \(differs in fingerprint, vocab_size, arrays"
    with pytest.raises(TokstudyError, match=other):
        merge_corpora([parts[0], tmp_path / "other", *parts[2:]], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(st.sampled_from(["a", "é", "語", " ", "\r", "\t"]), max_size=9), max_size=30),
    st.integers(1, 8),
)
def test_the_shards_of_a_file_give_each_line_once_in_order(tmp_path_factory, lines, shards):
    path = tmp_path_factory.mktemp("shards") / "text.txt"
    path.write_bytes("".join(line + "\n" for line in lines).encode())
    whole = list(iter_nonblank_lines(path))
    assert [line for k in range(shards) for line in iter_shard_lines(path, k, shards)] == whole


def test_corpus_checks_fingerprint_and_size(tmp_path, english, tokenizer):
    text = tmp_path / "train.txt"
    text.write_text("\n".join(english[:20]), encoding="utf-8")
    pretokenize(tokenizer, text, tmp_path / "corpus")
    with pytest.raises(TokstudyError, match="different vocabulary"):
        TokenCorpus.open(tmp_path / "corpus", fingerprint="0" * 16)
    ids = tmp_path / "corpus" / "ids.bin"
    ids.write_bytes(ids.read_bytes()[:-2])
    with pytest.raises(TokstudyError, match=r"ids\.bin: missing or truncated"):
        TokenCorpus.open(tmp_path / "corpus")
    with pytest.raises(TokstudyError, match="not a pre-tokenized corpus"):
        TokenCorpus.open(tmp_path)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(min_value=0, max_value=70000), max_size=12), min_size=1, max_size=15
    )
)
def test_write_corpus_round_trip(tmp_path_factory, lines):
    out = tmp_path_factory.mktemp("corpus") / "c"
    dtypes = {"ids": np.dtype(np.uint32)}
    rows = [Chunk.of_rows([{"ids": np.asarray(line, dtype=np.int64)} for line in lines], dtypes)]
    corpus = write_corpus(out, rows, dtypes, {"fingerprint": "x"})
    assert corpus.n_tokens == sum(map(len, lines))
    assert [corpus.line(i).tolist() for i in range(corpus.n_lines)] == lines


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 70000), max_size=7), min_size=1, max_size=12),
    st.integers(1, 4),
    st.data(),
)
def test_a_corpus_written_in_chunks_reads_back_in_chunks(tmp_path_factory, lines, width, data):
    out = tmp_path_factory.mktemp("corpus") / "c"
    rows = [
        {"ids": np.asarray(line), "spans": np.arange(2 * len(line)).reshape(-1, 2) + 7 * i}
        for i, line in enumerate(lines)
    ]
    dtypes = {"ids": np.dtype(np.uint32), "spans": np.dtype(np.int32)}
    chunks = [Chunk.of_rows(rows[i : i + width], dtypes) for i in range(0, len(rows), width)]
    corpus = write_corpus(out, chunks, dtypes, {"fingerprint": "x"})
    ids = [i for line in lines for i in line]
    assert np.load(out / "line_offsets.npy").tolist() == np.cumsum([0, *map(len, lines)]).tolist()
    assert not (out / "lengths.scratch").exists()
    start = data.draw(st.integers(0, len(ids)))
    stop = data.draw(st.integers(start, len(ids)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("tokstudy.models.data.COUNT_CHUNK", 3)  # pieces cross the chunks
        read = list(corpus.chunks("ids", start, stop))
        spans = list(corpus.chunks("spans", start, stop))
    assert all(len(piece) <= 3 for piece in read)
    assert [i for piece in read for i in piece.tolist()] == ids[start:stop]
    expected = np.concatenate([row["spans"] for row in rows])[start:stop].tolist()
    assert [pair for piece in spans for pair in piece.tolist()] == expected
    assert unit_counts(read, 5).tolist() == np.bincount(ids[start:stop], minlength=5).tolist()


@settings(max_examples=30, deadline=None)
@given(
    n_units=st.integers(10, 400),
    block_len=st.integers(1, 10),
    batch=st.integers(1, 9),
    seed=st.integers(0, 3),
)
def test_block_sampler_visits_every_block_once_per_epoch(n_units, block_len, batch, seed):
    sampler = BlockSampler(n_units, block_len, batch, seed)
    n_blocks = n_units // block_len
    steps = -(-2 * n_blocks // batch)
    starts = np.concatenate([sampler.starts(s) for s in range(steps)])
    for epoch in (starts[:n_blocks], starts[n_blocks : 2 * n_blocks]):
        assert sorted(epoch // block_len) == list(range(n_blocks))
    again = BlockSampler(n_units, block_len, batch, seed)
    assert np.array_equal(again.starts(steps - 1), sampler.starts(steps - 1))


def test_block_sampler_needs_one_block():
    with pytest.raises(TokstudyError, match="corpus too small"):
        BlockSampler(5, 10, 2, 0)


def test_blocks_are_framed_with_cls_and_sep():
    ids = np.arange(20, 40, dtype=np.uint16)
    framed = with_cls_sep(gather_blocks(ids, np.array([0, 10]), 5), 2, 3)
    assert framed.tolist() == [[2, 20, 21, 22, 23, 24, 3], [2, 30, 31, 32, 33, 34, 3]]


# --- masking ------------------------------------------------------------------------


def _batch(vocab_size: int, specials: list[int]) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab_size, (64, 128), generator=generator)  # no special ids
    ids[:, 0], ids[:, -1] = specials[0], specials[1]
    ids[:, 60] = specials[2]
    ids[:, 61] = 0  # [UNK]: text, maskable
    return ids


def test_masking_statistics(tokenizer):
    masker = Masker(tokenizer, seed=3)
    specials = [tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id]
    original = _batch(len(tokenizer), specials)
    inputs, labels = masker(original, step=5)
    chosen = labels != -100
    special = torch.isin(original, torch.tensor(specials))
    assert not chosen[special].any()
    assert torch.equal(inputs[special], original[special])
    assert torch.equal(labels[chosen], original[chosen])
    assert torch.equal(inputs[~chosen], original[~chosen])
    rate = chosen.sum().item() / (~special).sum().item()
    assert abs(rate - 0.15) < 0.01
    assert chosen[:, 61].any()
    as_mask = (inputs[chosen] == tokenizer.mask_token_id).float().mean().item()
    kept = (inputs[chosen] == original[chosen]).float().mean().item()
    assert abs(as_mask - 0.8) < 0.025
    assert abs(kept - 0.1) < 0.02
    assert abs(1 - as_mask - kept - 0.1) < 0.02  # random replacements
    again, _ = masker(original, step=5)
    other, _ = masker(original, step=6)
    assert torch.equal(again, inputs) and not torch.equal(other, inputs)


def test_masking_probabilities_are_configurable(tokenizer):
    masker = Masker(tokenizer, mlm_probability=0.3, mask_replace_prob=1.0, random_replace_prob=0)
    original = _batch(len(tokenizer), [tokenizer.cls_token_id, tokenizer.sep_token_id, 1])
    inputs, labels = masker(original, step=0)
    chosen = labels != -100
    assert abs(chosen.float().mean().item() - 0.3) < 0.02
    assert (inputs[chosen] == tokenizer.mask_token_id).all()


def test_whole_word_masking_masks_all_pieces(tmp_path, english, tokenizer):
    text = tmp_path / "t.txt"
    text.write_text("\n".join(english[:100]), encoding="utf-8")
    corpus = pretokenize(tokenizer, text, tmp_path / "c", with_char_spans=True)
    starts = np.arange(0, corpus.n_tokens - 60, 60)[:16]
    ids = torch.from_numpy(
        with_cls_sep(gather_blocks(corpus.ids, starts, 58), 2, 3).astype(np.int64)
    )
    spans = with_cls_sep(gather_blocks(corpus.arrays["char_spans"], starts, 58), (0, 0), (0, 0))
    masker = Masker(tokenizer, whole_word_mask=True, seed=1)
    inputs, labels = masker(ids, step=0, char_spans=spans)
    chosen = (labels != -100).numpy()
    assert chosen.any()
    # a piece touching its predecessor (no gap) belongs to the same word: same decision
    same_word = (spans[:, 1:, 0] == spans[:, :-1, 1]) & (spans[:, 1:, 1] > 0)
    same_word[:, 0] = False  # after [CLS]
    assert np.array_equal(chosen[:, 1:][same_word], chosen[:, :-1][same_word])
    assert (inputs[labels != -100] == tokenizer.mask_token_id).all()
    with pytest.raises(ValueError, match="character spans"):
        masker(ids, step=0)


def test_pretrain_config_validates_probabilities():
    with pytest.raises(TokstudyError, match="must not exceed 1"):
        PretrainConfig(mask_replace_prob=0.8, random_replace_prob=0.3)


def test_tokstudy_tokenizer_folder_with_a_slow_tokenizer(tmp_path, english):
    text = tmp_path / "train.txt"
    text.write_text("\n".join(english) + "\n", encoding="utf-8")
    train_to_directory("sp_unigram", text, TrainSpec(vocab_size=200, label="en"), tmp_path / "sp")
    tokenizer = load_transformers_tokenizer(tmp_path / "sp")
    assert not tokenizer.is_fast
    corpus = pretokenize(tokenizer, text, tmp_path / "corpus")
    assert corpus.line(1).tolist() == tokenizer(english[1], add_special_tokens=False)["input_ids"]
    with pytest.raises(TokstudyError, match="only fast"):
        pretokenize(tokenizer, text, tmp_path / "wwm", with_char_spans=True)
    with pytest.raises(TokstudyError, match="tokenizer folder not found"):
        load_transformers_tokenizer(tmp_path / "none")
