"""NMT model pieces: token-budget batching, label-smoothed loss, schedule, model, decoding."""

from __future__ import annotations

import gc
import itertools
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import MarianMTModel
from transformers.modeling_outputs import Seq2SeqLMOutput

from tokstudy.errors import TokstudyError
from tokstudy.nmt.batching import (
    IGNORE_INDEX,
    EncodedPair,
    SpecialIds,
    collate,
    encode_pairs,
    shared_special_ids,
    token_batches,
    window_batches,
)
from tokstudy.nmt.config import DecodeConfig, TrainConfig
from tokstudy.nmt.decode import hypothesis_ids, translate
from tokstudy.nmt.model import build_model, label_smoothed_loss
from tokstudy.nmt.train import NmtTask, nmt_optimization
from tokstudy.tokenizers.base import SPECIAL_TOKENS, Tokenizer, TrainSpec
from tokstudy.training.data_fit import unit_counts

SPECIAL = SpecialIds(pad=1, bos=2, eos=3, suppressed=(1, 2, 4))
CPU = torch.device("cpu")


class WordTokenizer(Tokenizer):
    """Test double: whitespace words looked up in a fixed vocabulary."""

    name = "words"

    def __init__(self, vocab: list[str]) -> None:
        self._vocab = vocab

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> WordTokenizer:
        raise NotImplementedError

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        return [[self._vocab.index(word) for word in line.split()] for line in lines]

    def decode(self, ids: Sequence[int]) -> str:
        return " ".join(self._vocab[i] for i in ids)

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        raise NotImplementedError

    @classmethod
    def load(cls, directory: Path) -> WordTokenizer:
        raise NotImplementedError

    def to_transformers(self):
        raise NotImplementedError


# --- special ids -----------------------------------------------------------------------


def test_special_ids_come_from_the_vocabulary() -> None:
    tokenizer = WordTokenizer(["x", *SPECIAL_TOKENS, "y"])
    special = SpecialIds.of(tokenizer)
    assert (special.pad, special.bos, special.eos) == (2, 3, 4)
    assert special.suppressed == (2, 3, 5)  # [PAD] [CLS] [MASK]; never [SEP] or [UNK]


def test_missing_or_mismatched_special_tokens_are_errors() -> None:
    with pytest.raises(TokstudyError, match=r"'words': no \[PAD\], \[SEP\] in its vocabulary"):
        SpecialIds.of(WordTokenizer(["[UNK]", "[CLS]", "a"]))
    source = WordTokenizer([*SPECIAL_TOKENS, "a"])
    target = WordTokenizer(["a", *SPECIAL_TOKENS])
    with pytest.raises(TokstudyError, match=r"different ids \(1/2/3 vs 2/3/4\)"):
        shared_special_ids(source, target)


# --- batching ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=200),
    extra=st.integers(min_value=0, max_value=300),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_token_batches_cover_every_example_once_within_budget(
    lengths: list[int], extra: int, seed: int
) -> None:
    budget = max(lengths) + extra
    batches = [batch.tolist() for batch in token_batches(lengths, budget, seed)]
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(len(batch) * max(lengths[i] for i in batch) <= budget for batch in batches)
    assert batches == _greedy_batches(lengths, budget, seed)


def _greedy_batches(lengths: list[int], budget: int, seed: int) -> list[list[int]]:
    """The batching recipe one example at a time (the loop the vectorised cut replaced):
    seeded tie order, sorted by length, a new batch when one more would overflow."""
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(lengths))
    order = sorted(shuffled.tolist(), key=lambda i: lengths[i])  # stable: ties keep shuffle
    batches: list[list[int]] = []
    current: list[int] = []
    for position in order:
        longest = max([lengths[i] for i in current] + [lengths[position]])
        if current and (len(current) + 1) * longest > budget:
            batches.append(current)
            current = []
        current.append(position)
    batches.append(current)
    return [batches[i] for i in rng.permutation(len(batches))]


def test_token_batches_group_similar_lengths_and_shuffle_by_seed() -> None:
    lengths = [10] * 50 + [40] * 50
    batches = [batch.tolist() for batch in token_batches(lengths, 200, seed=0)]
    assert all(len({lengths[i] for i in batch}) == 1 for batch in batches)
    assert [batch.tolist() for batch in token_batches(lengths, 200, seed=1)] != batches
    with pytest.raises(TokstudyError, match="example of 40 tokens does not fit"):
        token_batches(lengths, 39, seed=0)


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=120),
    window=st.integers(min_value=1, max_value=60),
    block=st.integers(min_value=1, max_value=12),
    multiple=st.integers(min_value=1, max_value=8),
    seed=st.tuples(st.integers(0, 100), st.integers(0, 3)),
)
def test_window_batches_are_token_batches_of_each_window(
    lengths: list[int], window: int, block: int, multiple: int, seed: tuple[int, int]
) -> None:
    """An epoch in windows, against the recipe rebuilt by hand: blocks of ``block``
    consecutive examples in a seeded order, ``window // block`` of them a window, each
    window cut by the one-example-at-a-time oracle on its padded lengths; a corpus that
    fits one window is batched as a whole, as before windows."""
    examples = [EncodedPair(i, [7] * (length - 1) + [3], []) for i, length in enumerate(lengths)]
    padded = [-(-length // multiple) * multiple for length in lengths]
    budget = max(padded) + 5
    batches = window_batches(examples, budget, seed, multiple, window=window, block=block)
    got = [batch.tolist() for batch in batches]
    if len(lengths) <= window:
        expected = _greedy_batches(padded, budget, seed)
    else:
        blocks = np.random.default_rng(seed).permutation(-(-len(lengths) // block)).tolist()
        per_window = max(window // block, 1)
        expected = []
        for number, first in enumerate(range(0, len(blocks), per_window)):
            positions = [
                position
                for b in blocks[first : first + per_window]
                for position in range(b * block, min((b + 1) * block, len(lengths)))
            ]
            cut = _greedy_batches([padded[p] for p in positions], budget, (*seed, number))
            expected += [[positions[i] for i in batch] for batch in cut]
    assert got == expected
    assert sorted(p for batch in got for p in batch) == list(range(len(lengths)))
    assert all(len(batch) * max(padded[p] for p in batch) <= budget for batch in got)


def test_window_batches_read_one_window_of_an_encoded_corpus_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """On encoded pairs the windows read their lengths from the start files a block at a
    time (never the corpus's): the same batches as on the pairs as a list, and each
    window's batches drawn from its own blocks only."""
    vocab = [*SPECIAL_TOKENS, "a", "b", "c"]
    tokenizer = WordTokenizer(vocab)
    rng = np.random.default_rng(0)
    pairs = [("a " * int(rng.integers(1, 9)), "b " * int(rng.integers(0, 9))) for _ in range(300)]
    encoded = encode_pairs(tokenizer, tokenizer, pairs, SPECIAL, 20, tmp_path / "enc")
    listed = list(encoded)
    assert encoded.lengths(7, 19).tolist() == [example.length for example in listed[7:19]]
    reads: list[tuple[int, int]] = []
    read_lengths = encoded.lengths
    monkeypatch.setattr(encoded, "lengths", lambda a, b: reads.append((a, b)) or read_lengths(a, b))
    settings = {"max_tokens": 40, "seed": (5, 1), "window": 64, "block": 16}
    from_disk = [batch.tolist() for batch in window_batches(encoded, **settings)]
    assert from_disk == [batch.tolist() for batch in window_batches(listed, **settings)]
    assert max(end - start for start, end in reads) == 16
    assert sorted(start for start, _ in reads) == list(range(0, 300, 16))
    # windows of 4 blocks: every batch within one window's 64 positions' blocks
    window_of_block = {start // 16: i // 4 for i, (start, _) in enumerate(reads)}
    assert all(len({window_of_block[p // 16] for p in batch}) == 1 for batch in from_disk)


def test_pairs_encoded_in_chunks_keep_their_ids_indices_and_length_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    vocab = [*SPECIAL_TOKENS, "a", "b", "c"]  # a=5, b=6, c=7; [SEP] (3) ends a source
    tokenizer = WordTokenizer(vocab)
    pairs = [("a b", "c"), ("a " * 5, "b"), ("c", "a a"), ("b", "c " * 5), ("a", "b")]
    monkeypatch.setattr("tokstudy.nmt.batching.ENCODE_PAIRS", 2)  # three chunks
    # a generator: read once, never held as a list
    examples = encode_pairs(tokenizer, tokenizer, iter(pairs), SPECIAL, 4, tmp_path / "enc")
    kept = [(e.index, list(e.source), list(e.target)) for e in examples]
    # by hand: pair 1's source (5 + [SEP]) and pair 3's target (5 + [CLS]) exceed 4
    assert kept == [(0, [5, 6, 3], [7]), (2, [7, 3], [5, 5]), (4, [5, 3], [6])]
    assert examples.lengths().tolist() == [3, 3, 2]
    assert unit_counts(examples.target_ids(chunk=2)).tolist() == [0, 0, 0, 0, 0, 2, 1, 1]
    # the files hold 4-byte ids and one 8-byte start per pair and side (plus the end)
    sizes = {path.name: path.stat().st_size for path in (tmp_path / "enc").iterdir()}
    assert sizes == {
        "source.ids": 4 * 7,
        "target.ids": 4 * 4,
        "source.starts": 8 * 4,
        "target.starts": 8 * 4,
        "pairs.index": 8 * 3,
    }


def test_pairs_in_a_temporary_folder_are_removed_with_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where mkdtemp makes folders
    tokenizer = WordTokenizer([*SPECIAL_TOKENS, "a", "b", "c"])
    examples = encode_pairs(tokenizer, tokenizer, [("a b", "c")], SPECIAL, 4)
    folder = examples.folder
    assert folder.parent == tmp_path and [list(e.source) for e in examples] == [[5, 6, 3]]
    del examples
    gc.collect()
    assert not folder.exists()
    with pytest.raises(TokstudyError, match="no training pair fits"):
        encode_pairs(tokenizer, tokenizer, [("a " * 5, "b")], SPECIAL, 4)
    assert list(tmp_path.iterdir()) == []


def test_collate_shifts_targets_and_masks_padding() -> None:
    batch = collate([EncodedPair(0, [7, 8, 3], [9]), EncodedPair(1, [7, 3], [9, 10, 11])], SPECIAL)
    assert batch["input_ids"].tolist() == [[7, 8, 3], [7, 3, 1]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert batch["decoder_input_ids"].tolist() == [[2, 9, 1, 1], [2, 9, 10, 11]]
    assert batch["labels"].tolist() == [[9, 3, IGNORE_INDEX, IGNORE_INDEX], [9, 10, 11, 3]]


def test_collate_pads_each_side_to_the_multiple() -> None:
    batch = collate(
        [EncodedPair(0, [7, 8, 3], [9]), EncodedPair(1, [7, 3], [9, 10, 11])], SPECIAL, 4
    )
    assert batch["input_ids"].tolist() == [[7, 8, 3, 1], [7, 3, 1, 1]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert batch["decoder_input_ids"].tolist() == [[2, 9, 1, 1], [2, 9, 10, 11]]  # 4 already
    wide = collate([EncodedPair(0, [7, 3], [9, 10, 11, 12])], SPECIAL, 4)
    assert wide["decoder_input_ids"].tolist() == [[2, 9, 10, 11, 12, 1, 1, 1]]
    assert wide["labels"].tolist() == [[9, 10, 11, 12, 3, *[IGNORE_INDEX] * 3]]


def _first_epoch(
    sizes: list[tuple[int, int]], multiple: int, rows: int, seed: int, **settings: object
) -> tuple[TrainConfig, NmtTask, list[tuple[dict[str, torch.Tensor], int]]]:
    """A task over pairs of these ``(source, target)`` sizes (pair ``i``'s source ids all
    ``100 + i``), its budget ``rows`` of the longest padded pair, and its first epoch's
    batches with their token counts."""
    examples = [EncodedPair(i, [100 + i] * s, [6] * t) for i, (s, t) in enumerate(sizes)]
    max_length = max(3, *(example.length for example in examples))
    config = TrainConfig(
        max_length=max_length,
        max_tokens=rows * -(-max_length // multiple) * multiple,
        pad_to_multiple=multiple,
        seed=seed,
        **settings,
    )
    task = NmtTask(examples, SPECIAL, config, None, evaluate=None, save=None)
    batches = []
    for step in itertools.count():
        batch = task.batch(step)
        if task.epochs[step] > 0:
            break
        batches.append(batch)
    return config, task, batches


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 30), st.integers(0, 30)), min_size=1, max_size=40),
    multiple=st.integers(1, 16),
    rows=st.integers(1, 4),
    seed=st.integers(0, 100),
)
def test_padded_batches_keep_the_budget(
    sizes: list[tuple[int, int]], multiple: int, rows: int, seed: int
) -> None:
    """An epoch of a task's padded batches: every pair once, each side's width a multiple
    of the padding, ``rows × widest side`` within ``max_tokens``, padding not counted."""
    config, _, batches = _first_epoch(sizes, multiple, rows, seed)
    seen: list[int] = []
    for batch, tokens in batches:
        batch_rows, width = batch["input_ids"].shape
        target_width = batch["labels"].shape[1]
        assert width % multiple == 0 and target_width % multiple == 0
        assert batch_rows * max(width, target_width) <= config.max_tokens
        ids = batch["input_ids"][:, 0].tolist()
        assert tokens == sum(sum(sizes[i - 100]) + 1 for i in ids)
        seen.extend(ids)
    assert sorted(seen) == [100 + i for i in range(len(sizes))]


def test_padding_to_a_multiple_leaves_the_loss_unchanged() -> None:
    """Padding is masked and ignored: the same sentences give the same loss (up to float
    rounding) at any padding multiple."""
    torch.manual_seed(0)
    model = build_model("tiny", 30, 30, SPECIAL, joint=False, dropout=0.0).eval()
    examples = [EncodedPair(0, [7, 8, 9, 3], [9, 10]), EncodedPair(1, [7, 3], [9, 10, 11, 12, 13])]
    losses = []
    for multiple in (1, 8, 16):
        batch = collate(examples, SPECIAL, multiple)
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        ).logits
        losses.append(label_smoothed_loss(logits, batch["labels"], 0.1)[0])
    assert losses[0].item() > 0
    torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=0)
    torch.testing.assert_close(losses[2], losses[0], rtol=1e-5, atol=0)


def test_the_host_made_source_mask_gives_the_models_own_loss() -> None:
    """``NmtTask.on_host`` makes the 4-D source mask (or drops an all-ones one) that
    transformers would make from the 2-D mask on the device: the same logits."""
    torch.manual_seed(0)
    model = build_model("tiny", 30, 30, SPECIAL, joint=False, dropout=0.0).eval()
    task = NmtTask([], SPECIAL, TrainConfig(), model.config, evaluate=None, save=None)
    padded = [EncodedPair(0, [7, 8, 9, 3], [9, 10]), EncodedPair(1, [7, 3], [9, 10, 11, 12, 13])]
    unpadded = [EncodedPair(0, [7, 8, 3], [9]), EncodedPair(1, [9, 7, 3], [9, 10, 11])]
    for examples in (padded, unpadded):
        batch = collate(examples, SPECIAL)
        host = task.on_host(batch)
        assert ("attention_mask" in host) == (examples is padded)
        logits = [
            model(
                input_ids=inputs["input_ids"],
                attention_mask=inputs.get("attention_mask"),
                decoder_input_ids=inputs["decoder_input_ids"],
            ).logits
            for inputs in (batch, host)
        ]
        torch.testing.assert_close(logits[1], logits[0], rtol=0, atol=1e-6)


def test_a_padded_longest_pair_over_the_budget_is_one_line() -> None:
    TrainConfig(max_length=100, max_tokens=104, pad_to_multiple=8)
    with pytest.raises(
        TokstudyError,
        match=r"max_tokens \(100\) must be >= nmt.train.max_length \(100, padded to 104\)",
    ):
        TrainConfig(max_length=100, max_tokens=100, pad_to_multiple=8)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"pad_to_multiple": 8},
            r"^nmt\.train\.cuda_graphs: max_length 256 in steps of pad_to_multiple 8 gives "
            r"32 batch shapes, one graph each; at most 16: set nmt\.train\.pad_to_multiple "
            r"to 16 or more$",
        ),
        (
            {"pad_to_multiple": 16, "compile": False},
            r"^nmt\.train\.cuda_graphs replays the compiled loss, but nmt\.train\.compile is "
            r"false: set it to true or leave it out$",
        ),
        (
            {"pad_to_multiple": 16, "devices": 2},
            r"^nmt\.train\.cuda_graphs trains on one device; nmt\.train\.devices is 2$",
        ),
    ],
)
def test_cuda_graphs_with_too_many_shapes_no_compile_or_devices_is_one_line(
    settings: dict, message: str
) -> None:
    TrainConfig(cuda_graphs=True, pad_to_multiple=16, max_tokens=4096)
    with pytest.raises(TokstudyError, match=message):
        TrainConfig(cuda_graphs=True, max_tokens=4096, **settings)


def test_collate_fills_a_fixed_shape_with_rows_without_a_target() -> None:
    batch = collate(
        [EncodedPair(0, [7, 8, 3], [9]), EncodedPair(1, [7, 3], [9, 10])], SPECIAL, 4, 12
    )
    assert batch["input_ids"].tolist() == [[7, 8, 3, 1], [7, 3, 1, 1], [3, 1, 1, 1]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]]
    assert batch["decoder_input_ids"].tolist() == [[2, 9, 1, 1], [2, 9, 10, 1], [2, 1, 1, 1]]
    no_label = [IGNORE_INDEX] * 4
    assert batch["labels"].tolist() == [[9, 3, *no_label[:2]], [9, 10, 3, IGNORE_INDEX], no_label]


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 40), st.integers(0, 40)), min_size=1, max_size=40),
    multiple=st.sampled_from([4, 8, 16]),
    rows=st.integers(1, 4),
    seed=st.integers(0, 100),
)
def test_fixed_shape_batches_take_few_shapes_and_count_only_their_sentences(
    sizes: list[tuple[int, int]], multiple: int, rows: int, seed: int
) -> None:
    """An epoch of ``cuda_graphs`` batches: every pair once; both sides ``max_tokens //
    width`` rows of one width, a multiple of the padding; one shape per width; the filler
    rows masked but for one source token, without labels, not counted."""
    config, task, batches = _first_epoch(sizes, multiple, rows, seed, cuda_graphs=True)
    budget = config.max_tokens
    lengths = [example.length for example in task.examples]
    seen: list[int] = []
    for batch, tokens in batches:
        batch_rows, width = batch["input_ids"].shape
        assert width % multiple == 0 and batch_rows == budget // width
        assert {tuple(tensor.shape) for tensor in batch.values()} == {(batch_rows, width)}
        real = (batch["labels"] != IGNORE_INDEX).any(dim=1)
        assert batch["attention_mask"][~real].sum(dim=1).tolist() == [1] * int((~real).sum())
        ids = batch["input_ids"][real, 0].tolist()
        assert width == -(-max(lengths[i - 100] for i in ids) // multiple) * multiple
        assert tokens == sum(sum(sizes[i - 100]) + 1 for i in ids)
        assert "attention_mask" in task.on_host(batch)  # the graphs' inputs: always the mask
        seen.extend(ids)
    assert sorted(seen) == [100 + i for i in range(len(sizes))]


def test_filler_rows_leave_the_loss_unchanged() -> None:
    torch.manual_seed(0)
    model = build_model("tiny", 30, 30, SPECIAL, joint=False, dropout=0.0).eval()
    examples = [EncodedPair(0, [7, 8, 9, 3], [9, 10]), EncodedPair(1, [7, 3], [9, 10, 11, 12, 13])]
    losses = []
    for budget in (None, 16, 40):  # width 8: 2 and 5 rows
        batch = collate(examples, SPECIAL, 8, budget)
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        ).logits
        losses.append(label_smoothed_loss(logits, batch["labels"], 0.1))
    for loss, nll, target_tokens in losses[1:]:
        torch.testing.assert_close(loss, losses[0][0], rtol=1e-5, atol=0)
        torch.testing.assert_close(nll, losses[0][1], rtol=1e-5, atol=0)
        assert target_tokens == losses[0][2] == 9


# --- loss and schedule -------------------------------------------------------------------


def test_label_smoothed_loss_matches_its_closed_form_and_ignores_padding() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 11)
    labels = torch.randint(0, 11, (2, 5))
    labels[1, 3:] = IGNORE_INDEX
    loss, nll, tokens = label_smoothed_loss(logits, labels, 0.1)
    assert tokens == 8
    keep = labels != IGNORE_INDEX
    log_p = F.log_softmax(logits, dim=-1)[keep]
    gold = log_p.gather(1, labels[keep][:, None]).squeeze(1)
    assert nll.item() == pytest.approx(-gold.sum().item(), rel=1e-5)
    expected = (0.9 * -gold - 0.1 * log_p.mean(dim=1)).sum()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    unsmoothed, _, _ = label_smoothed_loss(logits, labels, 0.0)
    assert unsmoothed.item() == pytest.approx(nll.item(), rel=1e-6)
    changed = logits.clone()
    changed[1, 4] += 100.0  # a padding position
    assert label_smoothed_loss(changed, labels, 0.1)[0].item() == pytest.approx(loss.item())


def test_label_smoothing_prefers_the_smoothed_distribution_to_certainty() -> None:
    vocab, epsilon = 10, 0.1
    labels = torch.tensor([[3]])
    uniform = label_smoothed_loss(torch.zeros(1, 1, vocab), labels, epsilon)[0]
    assert uniform.item() == pytest.approx(math.log(vocab))
    target = torch.full((vocab,), epsilon / vocab)
    target[3] += 1 - epsilon
    calibrated = label_smoothed_loss(target.log().view(1, 1, vocab), labels, epsilon)[0]
    certain = torch.full((1, 1, vocab), -30.0)
    certain[0, 0, 3] = 30.0
    assert calibrated < label_smoothed_loss(certain, labels, epsilon)[0]
    assert calibrated < uniform


def test_inverse_square_root_schedule_with_warmup() -> None:
    model = torch.nn.Linear(2, 2)
    optimizer, schedule = nmt_optimization(
        model, TrainConfig(lr=1e-3, warmup_steps=100), torch.device("cpu")
    )
    rates = []
    for _ in range(400):
        optimizer.step()
        schedule.step()
        rates.append(schedule.get_last_lr()[0])
    assert rates[49] == pytest.approx(0.5e-3)  # after 50 steps: half-way up
    assert rates[99] == pytest.approx(1e-3)
    assert rates[399] == pytest.approx(0.5e-3)  # 4 × warm-up: 1/√4


# --- model -------------------------------------------------------------------------------


def test_tiny_model_ties_the_target_embedding_to_the_output_projection() -> None:
    model = build_model("tiny", 50, 40, SPECIAL, joint=False, dropout=0.1)
    decoder = model.get_decoder().embed_tokens
    assert model.lm_head.weight.data_ptr() == decoder.weight.data_ptr()
    assert model.get_encoder().embed_tokens.weight.shape == (50, 128)
    assert decoder.weight.shape == (40, 128)
    assert len(model.get_encoder().layers) == 2 and model.config.encoder_attention_heads == 4
    joint = build_model("tiny", 40, 40, SPECIAL, joint=True, dropout=0.1)
    encoder_weight = joint.get_encoder().embed_tokens.weight
    assert encoder_weight.data_ptr() == joint.lm_head.weight.data_ptr()
    with pytest.raises(TokstudyError, match="sizes differ"):
        build_model("tiny", 50, 40, SPECIAL, joint=True, dropout=0.1)


# --- decoding ------------------------------------------------------------------------------


def test_hypothesis_ids_drop_the_start_and_cut_at_the_end() -> None:
    assert hypothesis_ids([2, 7, 8, 3, 9, 1], SPECIAL) == [7, 8]
    assert hypothesis_ids([2, 7, 8], SPECIAL) == [7, 8]
    assert hypothesis_ids([2, 3, 1, 1], SPECIAL) == []


def _greedy_by_hand(model: MarianMTModel, source: list[int], steps: int) -> list[int]:
    decoded = [SPECIAL.bos]
    for _ in range(steps):
        logits = model(
            input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([decoded])
        ).logits[0, -1]
        logits[list(SPECIAL.suppressed)] = -math.inf
        decoded.append(int(logits.argmax()))
        if decoded[-1] == SPECIAL.eos:
            break
    return hypothesis_ids(decoded, SPECIAL)


def test_beam_size_one_is_greedy_decoding_in_padded_batches() -> None:
    torch.manual_seed(0)
    model = build_model("tiny", 30, 30, SPECIAL, joint=False, dropout=0.1).eval()
    with torch.no_grad():
        model.final_logits_bias[0, SPECIAL.eos] = 2.0  # some hypotheses end early
    sources = [[5, 6, 7, 3], [8, 3], [9, 10, 11, 12, 13, 3], [14, 15, 3]]
    config = DecodeConfig(beam_size=1, batch_size=3, max_length_a=1.0, max_length_b=4)
    hypotheses = translate(model, sources, SPECIAL, config, CPU)
    with torch.no_grad():
        expected = [_greedy_by_hand(model, s, len(s) + 4) for s in sources]
    assert hypotheses == expected
    assert any(len(h) < len(s) + 4 for h, s in zip(hypotheses, sources, strict=True))


class BigramToy(MarianMTModel):
    """Next-token log-probabilities that depend only on the previous token."""

    table: torch.Tensor

    def forward(self, input_ids=None, decoder_input_ids=None, past_key_values=None, **kwargs):
        return Seq2SeqLMOutput(
            logits=self.table[decoder_input_ids], past_key_values=past_key_values
        )


def _toy_model() -> BigramToy:
    base = build_model("tiny", 12, 12, SPECIAL, joint=False, dropout=0.0)
    toy = BigramToy(base.config).eval()
    probs = torch.full((12, 12), 1e-4)
    probs[2, 4] = 0.6  # [MASK] after the start: the likeliest, but suppressed
    probs[2, 5], probs[2, 6], probs[2, 7] = 0.5, 0.4, 0.1  # start → A (greedy) or B
    probs[5, 8:12] = 0.225  # A → one of four equally likely continuations
    probs[5, 3] = 0.1
    probs[6, 3] = 0.9  # B → end: the better sentence overall
    probs[8:12, 3] = 1.0
    probs[3, 3] = 1.0
    toy.table = (probs / probs.sum(dim=1, keepdim=True)).log()
    return toy


def _log_prob(toy: BigramToy, ids: list[int]) -> float:
    path = [SPECIAL.bos, *ids, SPECIAL.eos]
    return sum(toy.table[a, b].item() for a, b in itertools.pairwise(path))


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_beam_search_finds_a_better_sentence_than_greedy(length_penalty: float) -> None:
    toy = _toy_model()
    sources = [[5, 6, 3]]

    def decode(beam: int) -> list[int]:
        config = DecodeConfig(beam_size=beam, length_penalty=length_penalty, max_length_b=6)
        return translate(toy, sources, SPECIAL, config, CPU)[0]

    greedy, beam = decode(1), decode(3)
    assert greedy == [5, 8]
    assert beam == [6]
    assert _log_prob(toy, beam) > _log_prob(toy, greedy)
