"""The one interface every tokenizer adapter implements, and what all adapters share.

An adapter wraps one tokenization algorithm (usually a well-kept library) behind
``train / encode_batch / decode / vocab / save / load / to_transformers``. The workflow
only ever sees adapter *names* (see :mod:`tokstudy.tokenizers.registry`).

:meth:`Tokenizer.train` is the same for every adapter: it checks the corpus, the size and
the parameters (declared per adapter in ``params_spec``, see
:mod:`tokstudy.tokenizers.params`), sets the library thread count, and calls the
adapter's :meth:`Tokenizer.fit`. :func:`corpus_lines` reads the training text and
:func:`enforce_size_policy` applies ``size_policy`` when a size cannot be reached.
"""

from __future__ import annotations

import logging
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.files.lines import count_lines, iter_lines
from tokstudy.tokenizers.params import Param, check_params, param_key
from tokstudy.tokenizers.train_fraction import (
    check_fraction,
    check_max_lines,
    lines_used,
    write_sample,
)
from tokstudy.tokenizers.words import BatchWords

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

UNK = "[UNK]"
PAD = "[PAD]"
CLS = "[CLS]"
SEP = "[SEP]"
MASK = "[MASK]"
SPECIAL_TOKENS: tuple[str, ...] = (UNK, PAD, CLS, SEP, MASK)
#: keyword arguments naming the special tokens of a ``transformers`` tokenizer
SPECIAL_TOKEN_KWARGS: dict[str, str] = {
    "unk_token": UNK,
    "pad_token": PAD,
    "cls_token": CLS,
    "sep_token": SEP,
    "mask_token": MASK,
}
SIZE_POLICIES: tuple[str, ...] = ("error", "adjust")


@dataclass(frozen=True)
class Encoded:
    """One line's token ids and each token's ``(start, end)`` character offsets in it."""

    ids: list[int]
    offsets: list[tuple[int, int]]


@dataclass(frozen=True)
class TokenStarts:
    """A batch of lines' token ids, flat and line after line, with where each token starts.

    ``ids`` and ``starts`` have one entry per token, ``lengths`` one per line (its number of
    tokens). ``starts[t]`` is a character offset in token ``t``'s line that lies in the word
    the token belongs to, or in the whitespace before that word: the token's own start
    where the library reports offsets. ``words``: the batch's words, where the adapter
    found them already (so that the metrics do not scan the lines again); ``word``: with
    ``words``, each token's index into them (−1: its line has no words), where the adapter
    knows it already.
    """

    ids: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    words: BatchWords | None = None
    word: np.ndarray | None = None

    @classmethod
    def from_encoded(cls, encoded: Sequence[Encoded]) -> TokenStarts:
        """The batch of per-line :class:`Encoded` results."""
        lengths = np.fromiter((len(e.ids) for e in encoded), dtype=np.int64, count=len(encoded))
        tokens = int(lengths.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encoded), np.int64, count=tokens)
        spans = chain.from_iterable(chain.from_iterable(e.offsets for e in encoded))
        starts = np.fromiter(spans, dtype=np.int64, count=2 * tokens)[::2]
        return cls(ids, starts, lengths)


def prefix_offsets(line: str, prefixes: Sequence[str]) -> list[tuple[int, int]]:
    """Token offsets from the decoded text before each token (``prefixes[k]``: tokens 0…k-1).

    A prefix that ends in a replacement character the line does not have there ends inside
    a character (byte tokens): the token starts at that character. Offsets are clipped to
    the line and never decrease.
    """
    starts, floor = [], 0
    for text in prefixes:
        start = len(text)
        if text.endswith("\ufffd") and line[start - 1 : start] != "\ufffd":
            start -= 1
        floor = max(floor, min(start, len(line)))
        starts.append(floor)
    return list(zip(starts, [*starts[1:], len(line)][: len(starts)], strict=True))


@dataclass(frozen=True)
class TrainSpec:
    """What to train: the requested size, adapter parameters and run settings.

    ``vocab_size`` is ``None`` for adapters whose size follows from the data (``char``).
    ``train_fraction``: the seeded share of the corpus's lines trained on
    (:mod:`tokstudy.tokenizers.train_fraction`; 1: all), and ``max_train_lines`` the most
    lines of that share (None: no cap). ``algorithm``: the registered
    adapter a named variant trains with (a study's ``tokenizers: {name: {algorithm: …}}``);
    None: the tokenizer's own name is the adapter.
    ``size_policy`` says what happens when the algorithm cannot reach the requested
    size: ``"error"`` raises :class:`VocabSizeError`, ``"adjust"`` keeps the size the
    algorithm reached and logs it (the saved ``meta.json`` records both sizes).
    """

    vocab_size: int | None
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    threads: int = 1
    size_policy: str = "error"
    label: str = ""
    train_fraction: float = 1.0
    algorithm: str | None = None
    max_train_lines: int | None = None

    def __post_init__(self) -> None:
        check_fraction(self.train_fraction)
        check_max_lines(self.max_train_lines)
        if self.size_policy not in SIZE_POLICIES:
            raise TokstudyError(
                f"size_policy must be one of {', '.join(SIZE_POLICIES)}, got {self.size_policy!r}"
            )
        if self.threads < 1:
            raise TokstudyError(f"threads must be ≥ 1, got {self.threads}")


def corpus_lines(path: Path) -> Iterator[str]:
    """Lines of a prepared corpus; a file that is not UTF-8 raises TokstudyError."""
    try:
        yield from iter_lines(path)
    except UnicodeDecodeError as err:
        raise TokstudyError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None


def set_library_threads(threads: int) -> None:
    """Let the Rust libraries (HF ``tokenizers``) use ``threads`` threads."""
    os.environ["RAYON_NUM_THREADS"] = str(max(1, threads))


def enforce_size_policy(name: str, spec: TrainSpec, reachable: int, detail: str = "") -> None:
    """Raise :class:`VocabSizeError` when ``reachable`` misses the requested size, or log a
    warning under ``size_policy: adjust`` (the caller then keeps ``reachable``)."""
    if spec.vocab_size is None or reachable == spec.vocab_size:
        return
    if reachable > spec.vocab_size:
        why, bound = "below the alphabet size", "smallest"
    else:
        why, bound = "above what the corpus yields", "largest"
    message = (
        f"{name} ({spec.label}): vocabulary size {spec.vocab_size} cannot be reached ({why}); "
        f"the algorithm reached {reachable}, the {bound} reachable size{detail}"
    )
    if spec.size_policy != "adjust":
        raise VocabSizeError(message)
    log.warning("%s; using %d (size_policy: adjust)", message, reachable)


class Tokenizer(ABC):
    """A trained tokenizer: ids are positions in :attr:`vocab`."""

    name: ClassVar[str]
    #: whether the adapter's vocabulary size is set by config (False: follows from data)
    sized: ClassVar[bool] = True
    #: whether ``decode(encode(text)) == text`` for text in the adapter's documented domain
    lossless: ClassVar[bool] = False
    #: whether two trainings on the same data give identical files (see each adapter's docs)
    deterministic: ClassVar[bool] = True
    #: whether :meth:`to_training_transformers` samples a segmentation on every call (subword
    #: regularisation of a model's training text); :meth:`encode_batch` and
    #: :meth:`to_transformers` stay deterministic
    sampling: ClassVar[bool] = False
    #: whether it learns from several languages' texts at once (the multilingual analysis
    #: passes the language of each mixed line as its ``languages_file`` parameter) and
    #: needs one of ``balance_keys`` among its parameters
    parity_aware: ClassVar[bool] = False
    balance_keys: ClassVar[tuple[str, ...]] = ()
    #: the parameters the adapter accepts (``tokenizers.<name>.params``)
    params_spec: ClassVar[Mapping[str, Param]] = {}
    #: whether keys beyond ``params_spec`` go to the library's trainer, which checks them
    #: (:meth:`check_library_params`)
    open_params: ClassVar[bool] = False
    #: the parameters with which the library samples the training text itself (recorded in
    #: ``meta.json`` as ``training_sample``, defaults included)
    sample_params: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def check_params(
        cls, params: Mapping[str, Any] | None, name: str | None = None
    ) -> dict[str, Any]:
        """``params`` checked against :attr:`params_spec` (and, for an open adapter, the
        keys beyond it by its library), defaults filled in; errors name the parameters of
        tokenizer ``name`` (a named variant's), by default the adapter's own."""
        name = name or cls.name
        checked = check_params(name, params, cls.params_spec, open_ended=cls.open_params)
        extra = {key: value for key, value in checked.items() if key not in cls.params_spec}
        if extra:
            for key in sorted(extra):  # one key at a time: the message names the bad one
                if (problem := cls.check_library_params({key: extra[key]})) is not None:
                    raise TokstudyError(f"{param_key(name, key)}: {problem}")
        return checked

    @classmethod
    def check_library_params(cls, extra: Mapping[str, Any]) -> str | None:
        """What the adapter's library says is wrong with the keys beyond
        :attr:`params_spec` (an open adapter's), or ``None``."""
        return None

    @classmethod
    def check_study_params(
        cls, params: Mapping[str, Any], languages: Sequence[str]
    ) -> tuple[str, str] | None:
        """``(key, problem)`` of checked ``params`` against the study's ``languages`` (the
        ones the tokenizer is trained on), or ``None``; none unless an adapter adds some."""
        return None

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> Tokenizer:
        """Train on a UTF-8 file with one sentence per line.

        Checks what every adapter needs (corpus file, size, parameters), sets the library
        thread count and hands :meth:`fit` the spec with checked parameters, and the
        corpus or, with ``train_fraction`` below 1 or more lines than ``max_train_lines``,
        its seeded share of lines.
        """
        corpus = Path(corpus)
        if not corpus.is_file():
            raise TokstudyError(f"{corpus}: corpus file not found")
        if cls.sized and spec.vocab_size is None:
            raise TokstudyError(f"{cls.name} ({spec.label}): a vocabulary size is required")
        checked = replace(spec, params=cls.check_params(spec.params))
        set_library_threads(spec.threads)
        fraction, cap = spec.train_fraction, spec.max_train_lines
        if fraction == 1 and cap is None:
            return cls.fit(corpus, checked)
        total = count_lines(corpus)
        if lines_used(total, fraction, cap) == total:  # the share is every line
            return cls.fit(corpus, checked)
        with tempfile.TemporaryDirectory(prefix="tokstudy-sample-") as folder:
            sample = Path(folder) / corpus.name
            write_sample(corpus, fraction, spec.seed, sample, cap, total)
            return cls.fit(sample, checked)

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> Tokenizer:
        """The adapter's training (``spec.params`` already checked); see :meth:`train`."""
        raise TokstudyError(f"{cls.name}: this tokenizer is loaded, not trained")

    @abstractmethod
    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Token ids of each line (no special tokens added)."""

    @abstractmethod
    def decode(self, ids: Sequence[int]) -> str:
        """Text of a sequence of ids produced by :meth:`encode_batch`."""

    @property
    @abstractmethod
    def vocab(self) -> list[str]:
        """Token strings, indexed by id."""

    @abstractmethod
    def save(self, directory: Path) -> None:
        """Write the adapter's own files into an existing directory."""

    @classmethod
    @abstractmethod
    def load(cls, directory: Path) -> Tokenizer:
        """Read what :meth:`save` wrote."""

    @abstractmethod
    def to_transformers(self) -> PreTrainedTokenizerBase:
        """A ``transformers`` tokenizer that encodes like this adapter.

        With ``add_special_tokens=True`` it wraps a sequence as ``[CLS] … [SEP]``.
        """

    def sampling_settings(self) -> dict[str, Any]:
        """How :meth:`to_training_transformers` samples (its settings, and ``seeded``:
        whether two runs draw the same samples); empty for an adapter that does not."""
        return {}

    def to_training_transformers(self) -> PreTrainedTokenizerBase:
        """The ``transformers`` tokenizer of a model's training text: :meth:`to_transformers`,
        except for a sampling adapter, whose tokenizer draws a segmentation on every call.
        Everything a model is evaluated on goes through :meth:`to_transformers`.
        """
        return self.to_transformers()

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Token ids of each line with each token's ``(start, end)`` character offsets.

        Adapters whose library reports offsets override this. The generic fallback takes
        the start of token k from the decoded text of tokens 0…k-1 (see
        :func:`prefix_offsets`): exact where decoding reproduces the text.
        """
        return [
            Encoded(ids, prefix_offsets(line, [self.decode(ids[:k]) for k in range(len(ids))]))
            for line, ids in zip(lines, self.encode_batch(lines), strict=True)
        ]

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """Token ids of a batch of lines, flat, with each token's start (the metrics' input).

        Built from :meth:`encode_batch_with_offsets`; adapters that know faster which word
        a token belongs to override it.
        """
        return TokenStarts.from_encoded(self.encode_batch_with_offsets(lines))

    def encode_batches_starts(
        self, batches: Iterable[Sequence[str]]
    ) -> Iterator[tuple[Sequence[str], TokenStarts]]:
        """Each batch with its :meth:`encode_batch_starts`, in order (the metric pass).

        Adapters whose library encodes outside the GIL override it to encode the next batch
        while the caller works on this one; the results are the same.
        """
        for lines in batches:
            yield lines, self.encode_batch_starts(lines)

    def encode(self, text: str) -> list[int]:
        """Token ids of one text."""
        return self.encode_batch([text])[0]

    def readable_token(self, token: str) -> str:
        """How a vocabulary string reads in tables; adapters whose strings encode bytes
        (``hf_bytelevel_bpe``) override it."""
        return token

    def tokenize(self, text: str) -> list[str]:
        """Token strings of one text."""
        vocab = self.vocab
        return [vocab[i] for i in self.encode(text)]

    @property
    def unk_id(self) -> int | None:
        """Id of the unknown token, or ``None`` if the adapter never emits one."""
        try:
            return self.vocab.index(UNK)
        except ValueError:
            return None

    @property
    def special_ids(self) -> frozenset[int]:
        """Ids of control tokens that never stand for text (UNK excluded)."""
        controls = set(SPECIAL_TOKENS) - {UNK}
        return frozenset(i for i, tok in enumerate(self.vocab) if tok in controls)
