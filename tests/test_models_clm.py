"""The ``clm`` task: bits per byte against hand computations, sliding windows, the unigram
baseline, bad input at start, and resuming a killed training."""

from __future__ import annotations

import json
import logging
import math
import re
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from conftest import logged, utf8_bytes
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, pre_tokenizers
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from tokstudy.errors import TokstudyError
from tokstudy.files.disk_array import DiskArray
from tokstudy.models import study_tables
from tokstudy.models.clm import stream as stream_module
from tokstudy.models.clm.model import llama_config, train_flops_per_token
from tokstudy.models.clm.scoring import bits_per_byte, score_clm, unigram_bits
from tokstudy.models.clm.stream import (
    LineStream,
    check_vocabulary,
    encode_lines,
    line_bytes,
    scored_stream,
)
from tokstudy.models.clm.train import _check_fits, train_clm
from tokstudy.models.clm.windows import token_nll, window_plan
from tokstudy.models.config import ClmConfig, ModelsConfig, from_mapping
from tokstudy.models.data import pretokenize
from tokstudy.models.noise import noise_lines

#: a character tokenizer over "a" and "b" with the five special tokens
VOCAB = {"[UNK]": 0, "[PAD]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "a": 5, "b": 6}


def char_tokenizer(vocab: dict[str, int] = VOCAB) -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("."), "isolated")]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


class FixedLogits(torch.nn.Module):
    """The same next-token logits at every position, whatever the context."""

    def __init__(self, logits: torch.Tensor) -> None:
        super().__init__()
        self.logits = logits

    def forward(self, input_ids: torch.Tensor) -> SimpleNamespace:
        return SimpleNamespace(logits=self.logits.expand(*input_ids.shape, -1).clone())


def stream_of(tokenizer: PreTrainedTokenizerFast, lines: list[str]) -> np.ndarray:
    return scored_stream(encode_lines(tokenizer, lines), tokenizer.sep_token_id)


def test_the_scored_stream_begins_and_ends_every_line_with_sep() -> None:
    # [SEP] first: every line of the training stream follows one, none follows a [CLS]
    stream = stream_of(char_tokenizer(), ["ab", "b"])
    assert stream.tolist() == [3, 5, 6, 3, 6, 3]
    assert line_bytes(["ab", "b", "é"]).tolist() == [3, 2, 3]  # each with its newline


@pytest.mark.parametrize(("context", "stride"), [(4, 1), (4, 3), (64, 32)])
def test_a_uniform_model_gives_tokens_log2_v_per_byte(context: int, stride: int) -> None:
    lines = ["abba a", "b", "aab bb ab"]
    stream = stream_of(char_tokenizer(), lines)
    nll = token_nll(FixedLogits(torch.zeros(len(VOCAB))), stream, context, stride)
    tokens = (5 + 1) + (1 + 1) + (7 + 1)  # letters and one [SEP] per line
    n_bytes = 7 + 2 + 10
    assert len(nll) == tokens
    assert bits_per_byte(nll.sum(), n_bytes) == pytest.approx(
        tokens * math.log2(len(VOCAB)) / n_bytes
    )


def test_a_hand_made_model_on_three_lines() -> None:
    # p(a) = 1/2, p(b) = 1/4, p([SEP]) = 1/8; the four other ids share 1/8
    probs = torch.tensor([1 / 32, 1 / 32, 1 / 32, 1 / 8, 1 / 32, 1 / 2, 1 / 4])
    lines = ["ab", "b", "aab"]
    stream = stream_of(char_tokenizer(), lines)
    nll = token_nll(FixedLogits(probs.log()), stream, context=3, stride=1)
    # a: 3 x 1 bit, b: 3 x 2 bits, [SEP]: 3 x 3 bits = 18 bits over "ab\nb\naab\n" (9 bytes)
    assert bits_per_byte(nll.sum(), utf8_bytes(lines)) == pytest.approx(18 / 9)


@given(
    n_tokens=st.integers(2, 300),
    context=st.integers(2, 40),
    data=st.data(),
)
def test_windows_score_every_token_once_with_enough_left_context(
    n_tokens: int, context: int, data: st.DataObject
) -> None:
    stride = data.draw(st.integers(1, context - 1))
    plan = window_plan(n_tokens, context, stride)
    scored = [p for begin, end, first in plan for p in range(first, end)]
    assert scored == list(range(1, n_tokens))
    for begin, end, first in plan:
        assert end - begin <= context and begin < first
        assert begin == 0 or first - begin >= context - stride


def test_sliding_windows_equal_full_context_when_the_text_fits() -> None:
    torch.manual_seed(0)
    tokenizer = char_tokenizer()
    config = ClmConfig(context=64, batch_size=2)
    model = LlamaForCausalLM(llama_config(tokenizer, config)).eval()
    stream = stream_of(tokenizer, ["abba ab", "bab", "aaab b"])
    full = torch.log_softmax(model(input_ids=torch.tensor(stream)[None]).logits[0], -1)
    by_hand = -full[torch.arange(len(stream) - 1), torch.tensor(stream[1:])].detach().numpy()
    for stride in (1, 7, 63):
        nll = token_nll(model, stream, 64, stride, batch_size=3)
        np.testing.assert_allclose(nll, by_hand, rtol=1e-5, atol=1e-6)


@given(
    st.lists(st.lists(st.integers(5, 9), max_size=6), min_size=1, max_size=30),
    st.data(),
)
def test_the_stream_on_disk_reads_the_blocks_of_the_whole_stream(lines, data) -> None:
    ids = np.array([i for line in lines for i in line], dtype=np.uint16)
    offsets = np.cumsum([0, *map(len, lines)])
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first + 1, len(lines)))
    # the oracle: the stream written out, each line's tokens and then [SEP] (3)
    whole = [t for line in lines[first:last] for t in [*line, 3]]
    # lines between the kept positions: every one, a few, or more than the corpus has
    stride = data.draw(st.sampled_from([1, 2, 3, stream_module.LINE_INDEX_STRIDE]))
    on_disk = data.draw(st.booleans(), label="on disk")
    with (
        tempfile.TemporaryDirectory() as folder,
        patch.object(stream_module, "LINE_INDEX_STRIDE", stride),
    ):
        if on_disk:
            ids.tofile(Path(folder) / "ids.bin")
            np.save(Path(folder) / "offsets.npy", offsets)
            ids = DiskArray.of_flat(Path(folder) / "ids.bin", np.uint16)
            offsets = DiskArray.of_npy(Path(folder) / "offsets.npy")
        check_stream(LineStream(ids, offsets, 3, first, last), whole, data)


def check_stream(stream: LineStream, whole: list[int], data) -> None:
    """``stream`` against the stream written out: length, array, counts, drawn blocks."""
    assert len(stream) == len(whole) and stream.array().tolist() == whole
    assert stream.counts(10).tolist() == np.bincount(whole, minlength=10).tolist()
    length = data.draw(st.integers(1, len(whole)))
    starts = np.array(data.draw(st.lists(st.integers(0, len(whole) - length), max_size=5)))
    expected = [whole[s : s + length] for s in starts.tolist()]
    assert stream.blocks(starts, length).tolist() == expected
    with pytest.raises(IndexError):
        stream.blocks(np.array([len(whole) - length + 1]), length)


def test_unigram_baseline_by_hand() -> None:
    tokenizer = char_tokenizer()
    train = stream_of(tokenizer, ["ab", "b"])[1:]  # a, b, [SEP], b, [SEP]
    scored = stream_of(tokenizer, ["ab"])[1:]  # a, b, [SEP]
    # add-one over V = 7: p(a) = 2/12, p(b) = 3/12, p([SEP]) = 3/12
    expected = -(math.log2(2 / 12) + math.log2(3 / 12) + math.log2(3 / 12))
    assert unigram_bits(np.bincount(train, minlength=len(VOCAB)), scored) == pytest.approx(expected)


# --- training on a toy corpus -----------------------------------------------------------


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: two spin-waiting threads crawl on a loaded two-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


TRAIN_LINES = [("ab " * (i % 5 + 1) + "b" * (i % 3 + 1)) for i in range(60)]


@pytest.fixture(scope="module")
def toy_cell(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clm_cell")
    tokenizer = char_tokenizer()
    tokenizer.save_pretrained(root / "tokenizer")
    train = root / "train.txt"
    train.write_text("\n".join(TRAIN_LINES) + "\n", encoding="utf-8")
    heldout = root / "heldout.txt"
    heldout.write_text("ab ab b\nb ab\nab ab ab bb\n", encoding="utf-8")
    pretokenize(tokenizer, train, root / "corpus")
    return {
        "root": root,
        "tokenizer": root / "tokenizer",
        "corpus": root / "corpus",
        "train": train,
        "heldout": heldout,
    }


FAST = {
    "context": 16,
    "batch_size": 4,
    "epochs": 2,
    "validation_lines": 20,
    "checkpoint_every": 3,
    "log_every": 2,
    "device": "cpu",
    "lr": 0.01,
}


def _train(cell: dict[str, Path], out: Path, on_step=None, **changes) -> Path:
    config = from_mapping(ClmConfig, {**FAST, **changes}, "models.clm")
    return train_clm(cell["tokenizer"], cell["corpus"], cell["train"], out, config, on_step=on_step)


def test_a_killed_training_resumes_to_the_same_weights(toy_cell, tmp_path: Path) -> None:
    whole = _train(toy_cell, tmp_path / "whole")

    def kill(step: int) -> None:
        if step == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _train(toy_cell, tmp_path / "killed", on_step=kill)
    assert (tmp_path / "killed" / "checkpoint.pt").is_file()
    resumed = _train(toy_cell, tmp_path / "killed")
    a = LlamaForCausalLM.from_pretrained(whole).state_dict()
    b = LlamaForCausalLM.from_pretrained(resumed).state_dict()
    assert all(torch.equal(a[key], b[key]) for key in a)  # bitwise: same ops, same order
    summary = json.loads((tmp_path / "killed" / "train.json").read_text())
    assert summary["steps"] == summary["planned_steps"] and summary["epochs_done"] >= 2
    assert not (tmp_path / "killed" / "checkpoint.pt").exists()
    log = pd.read_csv(tmp_path / "killed" / "train_log.csv")
    assert log["step"].is_monotonic_increasing and log["step"].is_unique


@pytest.mark.slow
def test_compiled_training_matches_eager_and_resumes_to_the_same_weights(toy_cell, tmp_path):
    eager = LlamaForCausalLM.from_pretrained(_train(toy_cell, tmp_path / "eager")).state_dict()
    whole = _train(toy_cell, tmp_path / "whole", compile=True)

    def kill(step: int) -> None:
        if step == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _train(toy_cell, tmp_path / "killed", on_step=kill, compile=True)
    resumed = _train(toy_cell, tmp_path / "killed", compile=True)
    a = LlamaForCausalLM.from_pretrained(whole).state_dict()
    b = LlamaForCausalLM.from_pretrained(resumed).state_dict()
    # the model, not the loss, is saved: its own parameter names, no ``_orig_mod.`` prefix
    assert list(a) == list(eager)
    assert all(torch.equal(a[key], b[key]) for key in a)
    # compiled kernels sum in another order: the same weights up to rounding
    assert all(torch.allclose(a[key], eager[key], rtol=1e-3, atol=1e-4) for key in a)
    assert not all(torch.equal(a[key], eager[key]) for key in a)  # compiled code really ran


def test_scores_and_the_unigram_flag(toy_cell, tmp_path: Path) -> None:
    model_dir = _train(toy_cell, tmp_path / "run", epochs=3)
    config = from_mapping(ClmConfig, FAST, "models.clm")
    out = tmp_path / "clm.tsv"
    score_clm(
        model_dir,
        toy_cell["tokenizer"],
        toy_cell["corpus"],
        toy_cell["heldout"],
        out,
        config,
        noise_levels=(50,),
    )
    table = pd.read_csv(out, sep="\t").set_index(["level", "metric"])["value"]
    details = json.loads((tmp_path / "clm.json").read_text())
    clean = details["levels"]["0"]
    assert clean["bytes"] == 8 + 5 + 12 and clean["tokens_scored"] == 5 + 3 + 8 + 3
    assert table[(0, "bits_per_byte")] == pytest.approx(clean["bits_per_byte"])
    below = 1 - table[(0, "bits_per_byte")] / table[(0, "unigram_bits_per_byte")]
    assert table[(0, "undertrained")] == float(below < 0.15)
    assert (50, "bits_per_byte") in table.index
    assert clean["bits_per_byte_low"] <= clean["bits_per_byte"] <= clean["bits_per_byte_high"]
    # the baseline by hand: add-one counts of the training text's tokens (its characters
    # without spaces and one [SEP] a line) over the 7 ids, for the held-out tokens
    train = Counter("".join(TRAIN_LINES).replace(" ", "")) + Counter({"[SEP]": len(TRAIN_LINES)})
    heldout = toy_cell["heldout"].read_text(encoding="utf-8").splitlines()
    scored = Counter("".join(heldout).replace(" ", "")) + Counter({"[SEP]": len(heldout)})
    total = sum(train.values()) + len(VOCAB)
    bits = -sum(k * math.log2((train[token] + 1) / total) for token, k in scored.items())
    assert clean["unigram_bits_per_byte"] == pytest.approx(bits / clean["bytes"])
    assert clean["below_unigram"] == pytest.approx(
        1 - clean["bits_per_byte"] * clean["bytes"] / bits
    )
    assert clean["unk_tokens"] == 0
    # the toy tokenizer drops spaces: no held-out line ("ab ab b", …) decodes back
    assert clean["roundtrip"] == 0.0
    keys = {"language": "xx", "tokenizer": "char", "vocab_size": "7", "seed": 0, "scale": "tiny"}
    [row] = study_tables.clm_table({out: keys}).to_dict("records")
    assert row["bits_per_byte"] == clean["bits_per_byte"] and row["budget"] == "bytes"
    assert row["undertrained"] == bool(table[(0, "undertrained")]) and row["epochs_done"] >= 3
    assert row["tokens_per_s"] > 0 and row["mfu"] is None  # no peak on the CPU
    assert row["bits_per_byte_noise50"] == details["levels"]["50"]["bits_per_byte"]
    assert row["lossy"] and not row["data_starved"]
    assert row["training_tokens"] == details["training"]["training_tokens"] > 0
    results = study_tables.collect_results({out: {**keys, "task": "clm"}})
    assert set(results["task"]) == {"clm"} and set(results["scale"]) == {"tiny"}
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("abc\ncc\n", encoding="utf-8")  # "c" is not in the vocabulary
    (tmp_path / "unknown").mkdir()
    score_clm(
        model_dir,
        toy_cell["tokenizer"],
        toy_cell["corpus"],
        unknown,
        tmp_path / "unknown" / "clm.tsv",
        config,
    )
    details = json.loads((tmp_path / "unknown" / "clm.json").read_text())
    assert details["levels"]["0"]["unk_tokens"] == 3


def test_the_score_logs_its_figures_and_warnings_and_honours_its_settings(
    toy_cell, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model_dir = _train(toy_cell, tmp_path / "run", epochs=1)
    # 40 lines (enough for an interval that depends on its resamples' seed); "c" is [UNK];
    # the last line is not scored; the toy tokenizer decodes with a space between tokens, so
    # only the 6 lines "a b" (i = 6, 12, …, 36) decode back to themselves
    lines = ["ab c"] + [("ab" if i % 2 else "a b") + "b" * (i % 3) for i in range(1, 40)]
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("\n".join([*lines, "bb"]) + "\n", encoding="utf-8")
    # every model is "undertrained" at a margin of 99 %
    settings = {**FAST, "undertrained_margin": 0.99, "heldout_max_lines": 40}
    config = from_mapping(ClmConfig, settings, "models.clm")
    noise = {"noise_levels": (50,), "noise_seed": 5, "noise_word_fraction": 0.5}
    (tmp_path / "a").mkdir()
    with caplog.at_level(logging.INFO, logger="tokstudy.models.clm.scoring"):
        score_clm(
            model_dir,
            toy_cell["tokenizer"],
            toy_cell["corpus"],
            heldout,
            tmp_path / "a" / "clm.tsv",
            config,
            **noise,
        )
    details = json.loads((tmp_path / "a" / "clm.json").read_text())
    clean = details["levels"]["0"]
    n_bytes, n_tokens = utf8_bytes(lines), sum(len(line.replace(" ", "")) + 1 for line in lines)
    assert (clean["lines"], clean["bytes"], clean["unk_tokens"]) == (40, n_bytes, 1)
    [noised] = noise_lines(lines, (50,), seed=5, word_fraction=0.5)[0].values()
    assert details["levels"]["50"]["bytes"] == utf8_bytes(noised)
    noised_tokens = sum(len(line.replace(" ", "")) + 1 for line in noised)
    assert details["levels"]["50"]["tokens_scored"] == noised_tokens
    assert set(details) == {
        "convention",
        "context",
        "stride",
        "unigram",
        "train_tokens_for_unigram",
        "training",
        "levels",
    }
    assert "[SEP] begins the text" in details["convention"]
    assert "bytes = UTF-8 bytes of the lines" in details["convention"]
    assert details["unigram"].startswith("add-one smoothed token frequencies")
    assert (details["context"], details["stride"]) == (16, config.window_stride)
    assert details["train_tokens_for_unigram"] == sum(
        len(line.replace(" ", "")) + 1 for line in TRAIN_LINES
    )
    below = 100 * clean["below_unigram"]
    # each line without "c" comes back with a space between all its characters: the spaces
    # inserted are bytes not given back as they were (the "ab c" line adds its own)
    inserted = sum(len(line.replace(" ", "")) - 1 - line.count(" ") for line in lines[1:])
    assert clean["lossy_bytes"] >= inserted / n_bytes > 0.001
    lost = 100 * clean["lossy_bytes"]
    assert logged(caplog, "tokstudy.models.clm.scoring")[:4] == [
        f"level 0%: {clean['bits_per_byte']:.4f} bits per byte (95 % interval "
        f"{clean['bits_per_byte_low']:.4f}-{clean['bits_per_byte_high']:.4f}; unigram "
        f"{clean['unigram_bits_per_byte']:.4f}, {below:.1f} % below), {n_tokens} tokens, "
        f"{n_bytes} bytes, 1 [UNK], 15.0 % of lines decode back exactly",
        f"{heldout}: 1 held-out tokens are [UNK] (level 0%)",
        f"{toy_cell['tokenizer']}: 85.0 % of the held-out lines ({lost:.3f} % of their bytes) "
        "do not decode back to themselves; its model predicts a simpler text than the bytes "
        "its bits are divided by; lossy above 0.1 % of the bytes (normalise the corpora: "
        "corpus_defaults.normalize)",
        f"{model_dir}: undertrained: {below:.1f} % below the unigram baseline (margin 99 %)",
    ]
    # the noised level logs its figures and its [UNK] count, but neither warning again
    later = logged(caplog, "tokstudy.models.clm.scoring")[4:]
    assert later[0].startswith("level 50%: ") and len(later) <= 2
    assert all("lossy" not in m and "undertrained" not in m for m in later)
    # the same inputs give the same file: the interval's resamples are seeded
    (tmp_path / "b").mkdir()
    score_clm(
        model_dir,
        toy_cell["tokenizer"],
        toy_cell["corpus"],
        heldout,
        tmp_path / "b" / "clm.tsv",
        config,
        **noise,
    )
    assert (tmp_path / "b" / "clm.json").read_text() == (tmp_path / "a" / "clm.json").read_text()
    # a text the tokenizer gives back whole is not lossy
    exact = tmp_path / "exact.txt"
    exact.write_text("a b\nb a b\n", encoding="utf-8")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tokstudy.models.clm.scoring"):
        score_clm(
            model_dir,
            toy_cell["tokenizer"],
            toy_cell["corpus"],
            exact,
            tmp_path / "b" / "clm.tsv",
            config,
        )
    figures, undertrained = logged(caplog, "tokstudy.models.clm.scoring")  # no "lossy" between them
    assert "100.0 % of lines decode back" in figures and "undertrained" in undertrained
    # bad input: no lines, a corpus tokenized with another vocabulary
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(TokstudyError, match=f"^{re.escape(str(empty))}: no text lines to score$"):
        score_clm(
            model_dir,
            toy_cell["tokenizer"],
            toy_cell["corpus"],
            empty,
            tmp_path / "b" / "clm.tsv",
            config,
        )
    other = char_tokenizer({**VOCAB, "c": 7})
    other.save_pretrained(tmp_path / "other")
    with pytest.raises(TokstudyError, match="corpus was tokenized with a different vocabulary"):
        score_clm(
            model_dir,
            tmp_path / "other",
            toy_cell["corpus"],
            heldout,
            tmp_path / "b" / "clm.tsv",
            config,
        )


def test_compute_matched_budget_trains_the_steps_the_flops_pay_for(toy_cell, tmp_path) -> None:
    probe = llama_config(char_tokenizer(), ClmConfig(context=16))
    per_step = train_flops_per_token(probe, 16) * 4 * 16
    _train(toy_cell, tmp_path / "run", budget="flops", train_flops=5.5 * per_step)
    assert json.loads((tmp_path / "run" / "train.json").read_text())["steps"] == 5


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"batch_size": 64}, r"corpus too small: \d+ blocks .* fewer than one batch"),
        ({"validation_lines": 500}, r"do not leave training text"),
    ],
)
def test_bad_cells_fail_at_start_with_one_line(toy_cell, tmp_path, changes, message) -> None:
    with pytest.raises(TokstudyError, match=message) as error:
        _train(toy_cell, tmp_path / "run", **changes)
    assert "\n" not in str(error.value) and not (tmp_path / "run" / "model").exists()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"preset": "tiny", "context": 4096}, r"models\.clm\.context: 4096 does not fit"),
        ({"context": 32, "stride": 32}, r"models\.clm\.stride"),
        ({"budget": "flops"}, r"models\.clm\.train_flops"),
        ({"preset": "huge"}, r"models\.clm\.preset must be one of"),
        # PyYAML (YAML 1.1) reads an exponent without a dot and a sign as text
        (yaml.safe_load("{budget: flops, train_flops: 4.51e12}"), r"write e\.g\. 4\.5e\+12"),
    ],
)
def test_bad_settings_are_one_line_errors(section: dict, message: str) -> None:
    with pytest.raises(TokstudyError, match=message):
        from_mapping(ModelsConfig, {"tasks": ["clm"], "clm": section})


def test_a_vocabulary_the_preset_cannot_hold_and_an_undecodable_one() -> None:
    with pytest.raises(TokstudyError, match=r"vocabulary of 70000 does not fit .* 'tiny'"):
        _check_fits(ClmConfig(), 70000, 100, "cell")
    tokenizer = char_tokenizer()
    tokenizer.cls_token = None
    with pytest.raises(TokstudyError, match=r"no \[CLS\] / \[SEP\] token"):
        check_vocabulary(tokenizer, "tok")
