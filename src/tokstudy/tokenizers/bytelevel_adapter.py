"""GPT-2-style byte-level BPE from HF ``tokenizers`` (``hf_bytelevel_bpe``).

Text is split by the GPT-2 regex and mapped to bytes (``ByteLevel`` pre-tokenizer), BPE
is learned over the 256 byte symbols (all of them always in the vocabulary), and the
``ByteLevel`` decoder maps tokens back to bytes. So encoding never produces ``[UNK]``
and ``decode(encode(text)) == text`` for every string of Unicode scalar values, with one
documented exception: with ``add_prefix_space: true`` a text that does not start with a
space is encoded as if it did, and decodes with that leading space.

Parameters (``spec.params``): ``add_prefix_space`` (bool, default ``false``).
The requested vocabulary size counts the 5 special tokens and the 256 byte tokens, so
the smallest reachable size is 261.

The module also holds the helpers that the adapters trained with HF ``tokenizers`` share:
streaming the corpus, thread setting and the vocabulary-size checks.
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import CLS, MASK, PAD, SEP, SPECIAL_TOKENS, UNK, Tokenizer, TrainSpec

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

log = logging.getLogger(__name__)
PROGRESS_EVERY = 100_000
SIZE_POLICIES = ("error", "adjust")


def corpus_lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 corpus (gzip-compressed if the name ends in ``.gz``), without newlines.

    Streams the file; raises :class:`TokstudyError` naming the file for a missing file or a
    line that is not UTF-8.
    """
    path = Path(path)
    if not path.is_file():
        raise TokstudyError(f"{path}: corpus file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    count = 0
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        try:
            for line in handle:
                count += 1
                if count % PROGRESS_EVERY == 0:
                    log.info("%s: read %d lines", path, count)
                yield line.removesuffix("\n").removesuffix("\r")
        except UnicodeDecodeError as error:
            raise TokstudyError(f"{path}: line {count + 1} is not valid UTF-8") from error
    log.info("%s: read %d lines", path, count)


def use_threads(threads: int) -> None:
    """Ask HF ``tokenizers`` (Rayon) to use ``threads`` threads.

    Rayon reads its pool size once per process, at the first parallel call, so the count
    takes full effect only before the first training or batch encoding in the process;
    ``threads == 1`` also switches ``tokenizers`` parallelism off, which always takes
    effect. Results do not depend on the thread count.
    """
    if threads < 1:
        raise TokstudyError(f"threads: must be at least 1, got {threads}")
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"


def checked_params(name: str, params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """``params`` over ``defaults``; unknown keys or values of the wrong type are errors."""
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise TokstudyError(
            f"{name}: unknown parameter {unknown[0]!r}; valid parameters: {', '.join(defaults)}"
        )
    merged = {**defaults, **params}
    for key, value in merged.items():
        if type(value) is not type(defaults[key]):
            raise TokstudyError(
                f"{name}: parameter {key!r} must be {type(defaults[key]).__name__}, got {value!r}"
            )
    return merged


def requested_size(name: str, spec: TrainSpec, smallest: int, why: str) -> int:
    """The vocabulary size to train for; raises or adjusts below ``smallest`` (see ``why``)."""
    if spec.size_policy not in SIZE_POLICIES:
        raise TokstudyError(
            f"size_policy: must be one of {', '.join(SIZE_POLICIES)}, got {spec.size_policy!r}"
        )
    if spec.vocab_size is None:
        raise TokstudyError(f"{spec.label}: {name} needs a vocab_size")
    if spec.vocab_size >= smallest:
        return spec.vocab_size
    message = (
        f"{spec.label}: {name} cannot reach vocab_size {spec.vocab_size}: "
        f"the smallest reachable size is {smallest} ({why})"
    )
    if spec.size_policy == "error":
        raise VocabSizeError(message)
    log.warning("%s; using %d", message, smallest)
    return smallest


def check_reached_size(name: str, spec: TrainSpec, reached: int, smallest: int) -> None:
    """Raise or warn (per ``spec.size_policy``) when training stopped short of the request."""
    if spec.vocab_size is None or reached >= spec.vocab_size:
        return
    message = (
        f"{spec.label}: {name} cannot reach vocab_size {spec.vocab_size}: this corpus allows "
        f"sizes {smallest} to {reached}"
    )
    if spec.size_policy == "error":
        raise VocabSizeError(message)
    log.warning("%s; keeping %d", message, reached)


class HFByteLevelBPE(Tokenizer):
    """Byte-level BPE (GPT-2 style) trained with HF ``tokenizers``."""

    name = "hf_bytelevel_bpe"
    lossless = True
    FILE = "tokenizer.json"
    DEFAULTS: dict[str, Any] = {"add_prefix_space": False}
    SMALLEST = len(SPECIAL_TOKENS) + 256

    def __init__(self, tokenizer: HFTokenizer) -> None:
        self._tokenizer = tokenizer
        # literal "[MASK]" etc. in text is text, as for every other adapter
        self._tokenizer.encode_special_tokens = True
        by_id = tokenizer.get_vocab(with_added_tokens=True)
        self._vocab = sorted(by_id, key=by_id.__getitem__)
        if [by_id[token] for token in self._vocab] != list(range(len(self._vocab))):
            raise TokstudyError(f"{self.name}: token ids are not contiguous")

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> HFByteLevelBPE:
        """Train on a corpus file; ``spec.seed`` is unused (training is deterministic)."""
        params = checked_params(cls.name, spec.params, cls.DEFAULTS)
        size = requested_size(cls.name, spec, cls.SMALLEST, "5 special + 256 byte tokens")
        use_threads(spec.threads)
        tokenizer = HFTokenizer(models.BPE(unk_token=UNK))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=params["add_prefix_space"], use_regex=True
        )
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=size,
            show_progress=False,
            special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tokenizer.train_from_iterator(corpus_lines(corpus), trainer)
        trained = cls(tokenizer)
        check_reached_size(cls.name, spec, len(trained.vocab), cls.SMALLEST)
        return trained

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Token ids of each line; never ``[UNK]``."""
        encodings = self._tokenizer.encode_batch_fast(list(lines), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ids (special tokens as their literal text)."""
        return self._tokenizer.decode(list(ids), skip_special_tokens=False)

    @property
    def vocab(self) -> list[str]:
        """Token strings (GPT-2 byte alphabet, e.g. ``Ġthe``), indexed by id."""
        return self._vocab

    def save(self, directory: Path) -> None:
        """Write ``tokenizer.json``."""
        self._tokenizer.save(str(Path(directory) / self.FILE), pretty=True)

    @classmethod
    def load(cls, directory: Path) -> HFByteLevelBPE:
        """Read ``tokenizer.json``."""
        path = Path(directory) / cls.FILE
        if not path.is_file():
            raise TokstudyError(f"{path}: {cls.name} tokenizer file not found")
        return cls(HFTokenizer.from_file(str(path)))

    def to_transformers(self) -> PreTrainedTokenizerFast:
        """A fast ``transformers`` tokenizer with the same ids; adds ``[CLS] … [SEP]``."""
        from transformers import PreTrainedTokenizerFast

        tokenizer = HFTokenizer.from_str(self._tokenizer.to_str())
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{CLS} $A {SEP}",
            pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
            special_tokens=[(token, self._vocab.index(token)) for token in (CLS, SEP)],
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tokenizer,
            unk_token=UNK,
            pad_token=PAD,
            cls_token=CLS,
            sep_token=SEP,
            mask_token=MASK,
            split_special_tokens=True,
            clean_up_tokenization_spaces=False,
        )
