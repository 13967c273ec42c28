"""SentencePiece BPE and Unigram (Kudo & Richardson, 2018) behind the tokstudy interface.

Defaults follow the HFT paper: ``character_coverage`` 1.0 (set it per language, e.g. 0.98
for Japanese), SentencePiece's ``nmt_nfkc`` normalisation. Every key of the adapter's
``params`` is passed to ``SentencePieceTrainer`` unchanged, so any trainer option can be set
from the config. The five special tokens are part of the vocabulary: ``[UNK]`` is
SentencePiece's unknown piece, the other four are control symbols that never stand for text.

Round trip: ``decode(encode(text)) == text`` holds for text that is NFKC-stable, uses single
spaces between words, has no leading or trailing whitespace and only characters seen in
training (SentencePiece normalises whitespace and maps unseen characters to ``[UNK]``).

Set by tokstudy, whatever the params say:

* one training thread (:data:`TRAINING_THREADS`): SentencePiece's Unigram EM sums
  per-thread partial counts, so the model (and, for BPE too, the ``num_threads`` stored in
  ``spm.model``) would depend on the CPU count a job gets;
* ``max_sentence_length`` at least the longest training line in bytes: SentencePiece
  silently skips longer lines, so no line is ever skipped;
* ``input_sentence_size`` below the corpus's line count: the sample is drawn here
  (:func:`training_sentences`, streamed into a temporary file) and SentencePiece reads
  that file (with its own ``input_sentence_size`` 0); fed the whole corpus, its reservoir
  sampling held memory that grew with the corpus (1.04 GB at 1 GB of text, 1.14 GB at
  5 GB; 0.91 GB at both this way: docs/benchmarks.md).
"""

from __future__ import annotations

import io
import itertools
import logging
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import sentencepiece as spm

from tokstudy.corpora.subset import SeededSubset
from tokstudy.errors import TokstudyError, one_line
from tokstudy.files.lines import write_text_lines
from tokstudy.tokenizers.base import (
    CLS,
    MASK,
    PAD,
    SEP,
    SPECIAL_TOKEN_KWARGS,
    SPECIAL_TOKENS,
    UNK,
    Tokenizer,
    TokenStarts,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import opens_word, word_mark_batches, word_mark_starts

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

MODEL_FILE = "spm.model"
#: SentencePiece's threads: a constant, so the model does not depend on the CPUs a job gets
TRAINING_THREADS = 1
#: keeps the ``input_sentence_size`` sample's draws apart from the other draws of a seed
SAMPLE_STREAM = 7
#: SentencePiece's own default ``max_sentence_length`` (bytes)
DEFAULT_MAX_SENTENCE_LENGTH = 4192
#: defaults of the trainer options tokstudy sets; any other trainer option may be given
SENTENCEPIECE_PARAMS: dict[str, Param] = {
    "character_coverage": Param((int, float), 1.0, minimum=0, maximum=1, low_open=True),
    "normalization_rule_name": Param(str, "nmt_nfkc"),
    "input_sentence_size": Param(int, 2_000_000, minimum=0),
    "shuffle_input_sentence": Param(bool, True),
    # left unset unless a line is longer (a set field is stored in spm.model)
    "max_sentence_length": Param(int, minimum=1),
}
_TOO_SMALL = re.compile(r"smaller than required_chars\. (\d+) vs (\d+)")
_TOO_LARGE = re.compile(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)")


def corpus_shape(corpus: Path) -> tuple[int, int]:
    """Number of lines and length in UTF-8 bytes of the longest line of a corpus."""
    lines = longest = 0
    for line in corpus_lines(corpus):
        lines += 1
        longest = max(longest, len(line.encode("utf-8")))
    return lines, longest


def training_sentences(
    corpus: Path, lines: int, sample: int, shuffle: bool, seed: int
) -> Iterator[str]:
    """The lines SentencePiece trains on, streamed: every line, or ``sample`` of the
    ``lines`` when that is fewer (``input_sentence_size``; 0: every line), a seeded uniform
    sample in corpus order when ``shuffle`` (``shuffle_input_sentence``), else the first."""
    if not 0 < sample < lines:
        return corpus_lines(corpus)
    if not shuffle:
        return itertools.islice(corpus_lines(corpus), sample)
    kept = SeededSubset(lines, sample, [seed, SAMPLE_STREAM], "input_sentence_size")
    return (line for line, member in zip(corpus_lines(corpus), kept, strict=True) if member)


def _trainer_options(
    model_type: str, spec: TrainSpec, corpus: Path, writer: io.BytesIO, folder: Path
) -> dict[str, Any]:
    """SentencePiece's trainer options for ``corpus``; a sample it is to read instead
    (``input_sentence_size`` below the line count) is written to ``folder``."""
    options = dict(spec.params)
    lines, longest = corpus_shape(corpus)
    sample, shuffle = options["input_sentence_size"], options["shuffle_input_sentence"]
    sentences = corpus_lines(corpus)
    if 0 < sample < lines:
        log.warning(
            "%s: SentencePiece trains on %s %d of the %d lines (params.input_sentence_size; "
            "0 uses all)",
            corpus,
            "a seeded random sample of" if shuffle else "the first",
            sample,
            lines,
        )
        path = folder / "sample.txt"
        write_text_lines(path, training_sentences(corpus, lines, sample, shuffle, spec.seed))
        sentences = corpus_lines(path)
        options["input_sentence_size"] = 0  # the sample is what it reads
    limit = options.get("max_sentence_length", DEFAULT_MAX_SENTENCE_LENGTH)
    if longest > limit:
        log.info(
            "%s: longest line has %d bytes; SentencePiece's max_sentence_length raised from "
            "%d so that no line is skipped",
            corpus,
            longest,
            limit,
        )
        options["max_sentence_length"] = longest
    options.update(
        sentence_iterator=sentences,
        model_writer=writer,
        model_type=model_type,
        vocab_size=spec.vocab_size,
        num_threads=TRAINING_THREADS,
        unk_id=0,
        unk_piece=UNK,
        bos_id=-1,
        eos_id=-1,
        pad_id=-1,
        control_symbols=[PAD, CLS, SEP, MASK],
        minloglevel=1,
    )
    return options


def _reachable_size(message: str, requested: int) -> int | None:
    """The size SentencePiece says it can reach, parsed from its error message."""
    if match := _TOO_SMALL.search(message):
        return int(match.group(2)) + len(SPECIAL_TOKENS)
    if match := _TOO_LARGE.search(message):
        return int(match.group(2))
    return None


class SentencePieceTokenizer(Tokenizer):
    """A SentencePiece model behind the tokstudy interface (trained as ``model_type``)."""

    model_type: ClassVar[str]
    lossless = True
    params_spec = SENTENCEPIECE_PARAMS
    open_params = True
    sample_params = ("input_sentence_size", "shuffle_input_sentence")

    def __init__(self, model_proto: bytes) -> None:
        self._proto = model_proto
        self._processor = spm.SentencePieceProcessor(model_proto=model_proto)
        self._vocab = [
            self._processor.id_to_piece(i) for i in range(self._processor.get_piece_size())
        ]
        self._opens_word = opens_word(self._vocab)

    @classmethod
    def check_library_params(cls, extra: Mapping[str, Any]) -> str | None:
        """SentencePiece's own check of trainer options (names, values, ranges): it parses
        them before it opens its input, so a trainer pointed at a missing file stops there
        when they are fine."""
        with tempfile.TemporaryDirectory(prefix="tokstudy-spm-") as folder:
            missing = Path(folder) / "no-input.txt"
            try:
                spm.SentencePieceTrainer.train(
                    input=str(missing), model_writer=io.BytesIO(), minloglevel=3, **extra
                )
            except (RuntimeError, ValueError, TypeError) as exc:
                message = one_line(str(exc))
                return None if str(missing) in message else f"SentencePiece: {message}"
        return None

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> SentencePieceTokenizer:
        spm.set_random_generator_seed(spec.seed)
        writer = io.BytesIO()
        try:
            with tempfile.TemporaryDirectory(prefix="tokstudy-spm-") as folder:
                options = _trainer_options(cls.model_type, spec, corpus, writer, Path(folder))
                spm.SentencePieceTrainer.train(**options)
        except RuntimeError as exc:
            reachable = _reachable_size(str(exc), spec.vocab_size)
            if reachable is None:
                raise TokstudyError(f"{cls.name} ({spec.label}): {exc}") from exc
            enforce_size_policy(cls.name, spec, reachable)
            return cls.fit(corpus, replace(spec, vocab_size=reachable, size_policy="error"))
        return cls(writer.getvalue())

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        return self._processor.encode(list(lines), out_type=int)

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """Ids with starts placed by the pieces' ``▁`` word marks (:func:`word_mark_starts`)."""
        return word_mark_starts(self, lines, self._opens_word)

    def encode_batches_starts(
        self, batches: Iterable[Sequence[str]]
    ) -> Iterator[tuple[Sequence[str], TokenStarts]]:
        """The next batch encoded while this one is used (:func:`word_mark_batches`)."""
        return word_mark_batches(self, batches, self._opens_word)

    def decode(self, ids: Sequence[int]) -> str:
        return self._processor.decode(list(ids))

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        (Path(directory) / MODEL_FILE).write_bytes(self._proto)

    @classmethod
    def load(cls, directory: Path) -> SentencePieceTokenizer:
        return cls.from_file(Path(directory) / MODEL_FILE)

    @classmethod
    def from_file(cls, path: Path) -> SentencePieceTokenizer:
        """A SentencePiece model file; a damaged one is one TokstudyError line naming it."""
        try:
            return cls(Path(path).read_bytes())
        except (OSError, RuntimeError) as exc:
            raise TokstudyError(f"{path}: not a SentencePiece model ({one_line(exc)})") from None

    def to_transformers(self) -> PreTrainedTokenizerBase:
        return self._backend()

    def _backend(self, **sp_model_kwargs: Any) -> PreTrainedTokenizerBase:
        """SentencePiece's ``transformers`` tokenizer of this model (``sp_model_kwargs``: the
        settings of its processor, e.g. its sampler)."""
        from transformers.tokenization_utils_sentencepiece import SentencePieceBackend

        with tempfile.TemporaryDirectory(prefix="tokstudy-spm-") as tmp:
            model_path = Path(tmp) / MODEL_FILE
            model_path.write_bytes(self._proto)
            return SentencePieceBackend(
                vocab_file=str(model_path),
                special_tokens_pattern="cls_sep",
                sp_model_kwargs=sp_model_kwargs,
                **SPECIAL_TOKEN_KWARGS,
            )


class SentencePieceBPE(SentencePieceTokenizer):
    """SentencePiece with the BPE model."""

    name = "sp_bpe"
    model_type = "bpe"


class SentencePieceUnigram(SentencePieceTokenizer):
    """SentencePiece with the Unigram language model."""

    name = "sp_unigram"
    model_type = "unigram"
