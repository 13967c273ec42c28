"""HF ``tokenizers`` BPE, WordPiece and Unigram behind the tokstudy interface.

Each pipeline is normaliser (NFKC) → pre-tokenizer (configurable: ``metaspace``,
``whitespace`` or ``bert``) → model → decoder, all stored in one ``tokenizer.json`` that
``transformers.PreTrainedTokenizerFast`` loads unchanged.

Round trip: with the ``metaspace`` pre-tokenizer (the default for BPE and Unigram),
``decode(encode(text)) == text`` for NFKC-stable text with single spaces between words, no
leading or trailing whitespace and only characters seen in training. ``whitespace`` and
``bert`` (the WordPiece default, as in BERT) drop the spacing around punctuation.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

from tokstudy.errors import TokstudyError, VocabSizeError, one_line
from tokstudy.files.lines import count_lines
from tokstudy.tokenizers.base import (
    CLS,
    SEP,
    SPECIAL_TOKEN_KWARGS,
    SPECIAL_TOKENS,
    UNK,
    Encoded,
    Tokenizer,
    TokenStarts,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import (
    METASPACE,
    opens_word,
    word_mark_batches,
    word_mark_starts,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

TOKENIZER_FILE = "tokenizer.json"
WORDPIECE_PREFIX = "##"


def _metaspace() -> tuple[pre_tokenizers.PreTokenizer, decoders.Decoder]:
    return (
        pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always"),
        decoders.Metaspace(replacement=METASPACE, prepend_scheme="always"),
    )


PRE_TOKENIZERS: dict[str, Callable[[], pre_tokenizers.PreTokenizer]] = {
    "metaspace": lambda: _metaspace()[0],
    "whitespace": pre_tokenizers.Whitespace,
    "bert": pre_tokenizers.BertPreTokenizer,
}


def with_cls_sep(tokenizer_json: str) -> HFTokenizer:
    """A copy of a serialised pipeline that wraps sequences as ``[CLS] … [SEP]``."""
    wrapped = HFTokenizer.from_str(tokenizer_json)
    wrapped.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
        special_tokens=[(CLS, wrapped.token_to_id(CLS)), (SEP, wrapped.token_to_id(SEP))],
    )
    return wrapped


def fast_tokenizer(tokenizer: HFTokenizer) -> PreTrainedTokenizerFast:
    """Wrap a ``tokenizers.Tokenizer`` as a ``transformers`` fast tokenizer (``[CLS] … [SEP]``)."""
    from transformers import PreTrainedTokenizerFast

    wrapped = with_cls_sep(tokenizer.to_str())
    return PreTrainedTokenizerFast(tokenizer_object=wrapped, **SPECIAL_TOKEN_KWARGS)


def read_tokenizer_json(path: Path) -> HFTokenizer:
    """An HF ``tokenizer.json``; a damaged file is one TokstudyError line naming it."""
    try:
        return HFTokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise TokstudyError(f"{path}: not a valid HF tokenizer.json ({one_line(exc)})") from None


class HFTokenizersAdapter(Tokenizer):
    """Common code of the adapters whose whole pipeline lives in a ``tokenizer.json``."""

    def __init__(self, tokenizer: HFTokenizer) -> None:
        self._tokenizer = tokenizer
        size = tokenizer.get_vocab_size(with_added_tokens=True)
        self._vocab = [tokenizer.id_to_token(i) for i in range(size)]

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(list(lines), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def encode_batch_with_offsets(self, lines: Sequence[str]) -> list[Encoded]:
        """Ids with the character offsets the library reports for each token."""
        encodings = self._tokenizer.encode_batch(list(lines), add_special_tokens=False)
        return [Encoded(encoding.ids, encoding.offsets) for encoding in encodings]

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """With a ``Metaspace`` pre-tokenizer that splits at its marks, starts from the word
        marks (:func:`word_mark_starts`, no per-token offsets); otherwise from the offsets."""
        if self._opens_word is None:
            return super().encode_batch_starts(lines)
        return word_mark_starts(self, lines, self._opens_word)

    def encode_batches_starts(
        self, batches: Iterable[Sequence[str]]
    ) -> Iterator[tuple[Sequence[str], TokenStarts]]:
        """With word marks, the next batch encoded while this one is used
        (:func:`word_mark_batches`)."""
        if self._opens_word is None:
            return super().encode_batches_starts(batches)
        return word_mark_batches(self, batches, self._opens_word)

    @cached_property
    def _opens_word(self) -> np.ndarray | None:
        """Per id, whether its token opens a word (:func:`opens_word`), for a pipeline whose
        pre-tokenizer is a ``Metaspace`` that splits at its marks; None for any other."""
        pre_tokenizer = self._tokenizer.pre_tokenizer
        if isinstance(pre_tokenizer, pre_tokenizers.Metaspace) and pre_tokenizer.split:
            return opens_word(self.vocab)
        return None

    def decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=False)

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        self._tokenizer.save(str(Path(directory) / TOKENIZER_FILE))

    @classmethod
    def load(cls, directory: Path) -> HFTokenizersAdapter:
        return cls(read_tokenizer_json(Path(directory) / TOKENIZER_FILE))

    def to_transformers(self) -> PreTrainedTokenizerFast:
        return fast_tokenizer(self._tokenizer)

    @classmethod
    def train_library(
        cls, tokenizer: HFTokenizer, trainer: trainers.Trainer, corpus: Path, spec: TrainSpec
    ) -> HFTokenizer:
        """Train ``tokenizer`` on the corpus, streaming it, and make the result canonical."""
        try:
            tokenizer.train_from_iterator(
                corpus_lines(corpus), trainer=trainer, length=count_lines(corpus)
            )
        except TokstudyError:
            raise
        except Exception as exc:  # the Rust trainers raise a bare Exception
            error = VocabSizeError if "vocabulary" in str(exc).lower() else TokstudyError
            raise error(
                f"{cls.name} ({spec.label}): vocabulary size {spec.vocab_size} "
                f"cannot be reached: {exc}"
            ) from exc
        cls.make_canonical(tokenizer)
        return tokenizer

    @classmethod
    def train_pipeline(
        cls, tokenizer: HFTokenizer, trainer: trainers.Trainer, corpus: Path, spec: TrainSpec
    ) -> HFTokenizersAdapter:
        """:meth:`train_library`, then the size policy on the size reached."""
        adapter = cls(cls.train_library(tokenizer, trainer, corpus, spec))
        enforce_size_policy(cls.name, spec, len(adapter.vocab))
        return adapter

    @staticmethod
    def make_canonical(tokenizer: HFTokenizer) -> None:
        """Remove run-to-run differences the library's trainer leaves (default: none)."""


def pre_tokenizer_param(default: str) -> dict[str, Param]:
    """The ``pre_tokenizer`` parameter of the HF adapters, with its default."""
    return {"pre_tokenizer": Param(str, default, choices=tuple(sorted(PRE_TOKENIZERS)))}


class TrainedPipeline(HFTokenizersAdapter):
    """NFKC → the configured pre-tokenizer → a model trained by its library trainer.

    A subclass names the model and trainer; every parameter but ``pre_tokenizer`` goes to
    the trainer.
    """

    open_params = True
    #: extra keyword arguments of the trainer
    trainer_options: ClassVar[dict[str, Any]] = {}

    @staticmethod
    def new_model() -> models.Model:
        """An untrained model."""
        raise NotImplementedError

    @staticmethod
    def new_trainer(**options: Any) -> trainers.Trainer:
        """The library trainer of the model."""
        raise NotImplementedError

    @staticmethod
    def new_decoder(pre_tokenizer: str) -> decoders.Decoder | None:
        """The decoder (default: the pre-tokenizer's, if it has one)."""
        return _metaspace()[1] if pre_tokenizer == "metaspace" else None

    @classmethod
    def check_library_params(cls, extra: Mapping[str, Any]) -> str | None:
        """The trainer's own check: it refuses a value of the wrong type or range; a key
        not in its signature, which it would ignore, is refused here."""
        trainer = type(cls.new_trainer(**cls.trainer_options)).__name__
        settings = inspect.signature(cls.new_trainer).parameters
        unknown = sorted(key for key in extra if key not in settings or key == "self")
        if unknown:
            return f"unknown parameter: {trainer} has no setting {unknown[0]!r}"
        try:
            cls.new_trainer(**cls.trainer_options, **extra)
        except (TypeError, ValueError, OverflowError) as exc:
            return f"{trainer}: {exc} (got {', '.join(map(repr, extra.values()))})"
        return None

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        params = dict(spec.params)
        choice = params.pop("pre_tokenizer")
        tokenizer = HFTokenizer(cls.new_model())
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = PRE_TOKENIZERS[choice]()
        if (decoder := cls.new_decoder(choice)) is not None:
            tokenizer.decoder = decoder
        trainer = cls.new_trainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=False,
            **cls.trainer_options,
            **params,
        )
        return cls.train_pipeline(tokenizer, trainer, corpus, spec)


class HFBPE(TrainedPipeline):
    """Byte-pair encoding (Sennrich et al., 2016) from HF ``tokenizers``."""

    name = "hf_bpe"
    lossless = True
    params_spec = pre_tokenizer_param("metaspace")
    new_trainer = staticmethod(trainers.BpeTrainer)

    @staticmethod
    def new_model() -> models.Model:
        return models.BPE(unk_token=UNK)


class HFWordPiece(TrainedPipeline):
    """WordPiece (Schuster & Nakajima, 2012; BERT) from HF ``tokenizers``.

    Not deterministic: the library's trainer numbers ``##`` tokens in hash-map order and
    uses those numbers to break ties between equally frequent merges, so the last merges
    can differ between runs (huggingface/tokenizers issue 1794). Ids are renumbered in a
    fixed order, which removes every other difference.
    """

    name = "hf_wordpiece"
    deterministic = False
    params_spec = pre_tokenizer_param("bert")
    new_trainer = staticmethod(trainers.WordPieceTrainer)

    @staticmethod
    def new_model() -> models.Model:
        return models.WordPiece(unk_token=UNK)

    @staticmethod
    def new_decoder(pre_tokenizer: str) -> decoders.Decoder:
        return decoders.WordPiece(prefix=WORDPIECE_PREFIX)

    @staticmethod
    def make_canonical(tokenizer: HFTokenizer) -> None:
        """Number the vocabulary in a fixed order: special tokens, then by token.

        The trainer numbers tokens in hash-map order, which changes from run to run;
        WordPiece ids carry no meaning of their own.
        """
        vocab = tokenizer.get_vocab(with_added_tokens=False)
        ordered = [*SPECIAL_TOKENS, *sorted(set(vocab) - set(SPECIAL_TOKENS))]
        tokenizer.model = models.WordPiece(
            {token: i for i, token in enumerate(ordered)},
            unk_token=UNK,
            continuing_subword_prefix=WORDPIECE_PREFIX,
        )


class HFUnigram(TrainedPipeline):
    """The Unigram language model (Kudo, 2018) from HF ``tokenizers``."""

    name = "hf_unigram"
    lossless = True
    params_spec = pre_tokenizer_param("metaspace")
    new_trainer = staticmethod(trainers.UnigramTrainer)
    trainer_options: ClassVar[dict[str, Any]] = {"unk_token": UNK}

    @staticmethod
    def new_model() -> models.Model:
        return models.Unigram()

    @staticmethod
    def make_canonical(tokenizer: HFTokenizer) -> None:
        """Order pieces by (score, piece) and give the trainer's filler characters one score.

        The trainer appends required characters that the model lacks in hash-set order, each
        0.0001 above the previous one, and its EM sums leave last-digit float noise, so two
        runs differ. Scores are rounded to 8 decimals; single characters within that filler
        band above the minimum score all get the minimum score.
        """
        pieces = json.loads(tokenizer.to_str())["model"]["vocab"]
        specials = [(p, s) for p, s in pieces if p in SPECIAL_TOKENS]
        rest = [(p, round(s, 8)) for p, s in pieces if p not in SPECIAL_TOKENS]
        lowest = min(s for _, s in rest)
        band = lowest + 1e-4 * sum(1 for p, _ in rest if len(p) == 1) + 1e-6
        rest = [(p, lowest if len(p) == 1 and s <= band else s) for p, s in rest]
        rest.sort(key=lambda item: (-item[1], item[0]))
        ordered = sorted(specials, key=lambda item: SPECIAL_TOKENS.index(item[0])) + rest
        tokenizer.model = models.Unigram(ordered, unk_id=0, byte_fallback=False)
