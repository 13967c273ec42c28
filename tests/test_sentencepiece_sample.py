"""SentencePiece's ``input_sentence_size``: the sample drawn by tokstudy, what the trainer reads."""

from __future__ import annotations

from pathlib import Path

import sentencepiece as spm
from conftest import write_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstudy.tokenizers.adapters.sentencepiece import SentencePieceBPE, training_sentences
from tokstudy.tokenizers.base import TrainSpec

#: one CJK character per line, so a trained vocabulary shows which lines it read
FIRST_MARK = 0x4E00


def marked_corpus(path: Path, lines: int) -> Path:
    return write_lines(path, [f"the cat sat {chr(FIRST_MARK + i)}" for i in range(lines)])


@settings(max_examples=40, deadline=None)
@given(
    lines=st.integers(1, 300),
    sample=st.integers(0, 400),
    shuffle=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_the_sample_is_that_many_lines_in_corpus_order(
    tmp_path_factory, lines: int, sample: int, shuffle: bool, seed: int
) -> None:
    corpus = marked_corpus(tmp_path_factory.mktemp("c") / "train.txt", lines)
    every = corpus.read_text(encoding="utf-8").splitlines()
    drawn = list(training_sentences(corpus, lines, sample, shuffle, seed))
    if sample == 0 or sample >= lines:
        assert drawn == every
        return
    assert len(drawn) == sample
    positions = [every.index(line) for line in drawn]
    assert positions == sorted(set(positions))  # distinct, in corpus order
    if not shuffle:
        assert drawn == every[:sample]
    assert drawn == list(training_sentences(corpus, lines, sample, shuffle, seed))


def test_a_seed_draws_its_own_sample(tmp_path: Path) -> None:
    corpus = marked_corpus(tmp_path / "train.txt", 1000)
    samples = {tuple(training_sentences(corpus, 1000, 100, True, seed)) for seed in range(5)}
    assert len(samples) == 5


def test_sentencepiece_reads_exactly_the_sample(tmp_path: Path) -> None:
    lines, sample = 300, 60
    corpus = marked_corpus(tmp_path / "train.txt", lines)
    spec = TrainSpec(
        150,
        {
            "character_coverage": 1.0,
            "normalization_rule_name": "identity",
            "input_sentence_size": sample,
            "shuffle_input_sentence": True,
        },
        seed=3,
        size_policy="adjust",
    )
    tokenizer = SentencePieceBPE.fit(corpus, spec)
    marks = {piece for piece in tokenizer.vocab if len(piece) == 1 and ord(piece) >= FIRST_MARK}
    drawn = list(training_sentences(corpus, lines, sample, True, 3))
    # character coverage 1: every character read is a piece, and no other mark is
    assert marks == {line[-1] for line in drawn}
    # the oracle: SentencePiece itself trained on a file of the sample alone
    sample_file = write_lines(tmp_path / "sample.txt", drawn)
    reference = tmp_path / "reference"
    spm.SentencePieceTrainer.train(
        input=str(sample_file),
        model_prefix=str(reference),
        model_type="bpe",
        vocab_size=len(tokenizer.vocab),
        character_coverage=1.0,
        normalization_rule_name="identity",
        num_threads=1,
        unk_id=0,
        unk_piece="[UNK]",
        bos_id=-1,
        eos_id=-1,
        pad_id=-1,
        control_symbols=["[PAD]", "[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    oracle = spm.SentencePieceProcessor(model_file=f"{reference}.model")
    assert [oracle.id_to_piece(i) for i in range(oracle.get_piece_size())] == tokenizer.vocab
