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

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

from tokstudy.corpus_io import count_lines, iter_lines
from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import (
    CLS,
    SEP,
    SPECIAL_TOKEN_KWARGS,
    SPECIAL_TOKENS,
    UNK,
    Encoded,
    Tokenizer,
    TrainSpec,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

log = logging.getLogger(__name__)

TOKENIZER_FILE = "tokenizer.json"
METASPACE = "▁"
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


def fast_tokenizer(tokenizer: HFTokenizer) -> PreTrainedTokenizerFast:
    """Wrap a ``tokenizers.Tokenizer`` as a ``transformers`` fast tokenizer (``[CLS] … [SEP]``)."""
    from transformers import PreTrainedTokenizerFast

    wrapped = HFTokenizer.from_str(tokenizer.to_str())
    wrapped.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
        special_tokens=[(CLS, wrapped.token_to_id(CLS)), (SEP, wrapped.token_to_id(SEP))],
    )
    return PreTrainedTokenizerFast(tokenizer_object=wrapped, **SPECIAL_TOKEN_KWARGS)


def check_size(name: str, spec: TrainSpec, reached: int) -> None:
    """Raise (or log, under ``size_policy: adjust``) when training missed the requested size."""
    if spec.vocab_size is None or reached == spec.vocab_size:
        return
    why = "below the alphabet size" if reached > spec.vocab_size else "above what the corpus yields"
    message = (
        f"{name} ({spec.label}): vocabulary size {spec.vocab_size} is {why}; "
        f"the algorithm reached {reached}"
    )
    if spec.size_policy != "adjust":
        raise VocabSizeError(message)
    log.warning("%s; keeping %d (size_policy: adjust)", message, reached)


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

    def decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=False)

    @property
    def vocab(self) -> list[str]:
        return self._vocab

    def save(self, directory: Path) -> None:
        self._tokenizer.save(str(Path(directory) / TOKENIZER_FILE))

    @classmethod
    def load(cls, directory: Path) -> HFTokenizersAdapter:
        return cls(HFTokenizer.from_file(str(Path(directory) / TOKENIZER_FILE)))

    def to_transformers(self) -> PreTrainedTokenizerFast:
        return fast_tokenizer(self._tokenizer)

    @classmethod
    def train_pipeline(
        cls, tokenizer: HFTokenizer, trainer: trainers.Trainer, corpus: Path, spec: TrainSpec
    ) -> HFTokenizersAdapter:
        """Train ``tokenizer`` on the corpus, streaming it, and check the size reached."""
        os.environ["RAYON_NUM_THREADS"] = str(max(1, spec.threads))
        lines: Iterator[str] = iter_lines(corpus)
        try:
            tokenizer.train_from_iterator(lines, trainer=trainer, length=count_lines(corpus))
        except Exception as exc:  # the Rust trainers raise a bare Exception
            error = VocabSizeError if "vocabulary" in str(exc).lower() else TokstudyError
            raise error(
                f"{cls.name} ({spec.label}): vocabulary size {spec.vocab_size} "
                f"cannot be reached: {exc}"
            ) from exc
        cls.make_canonical(tokenizer)
        adapter = cls(tokenizer)
        check_size(cls.name, spec, len(adapter.vocab))
        return adapter

    @staticmethod
    def make_canonical(tokenizer: HFTokenizer) -> None:
        """Remove run-to-run differences the library's trainer leaves (default: none)."""


def _pipeline(
    model: models.Model, params: dict[str, Any], default_pre_tokenizer: str
) -> tuple[HFTokenizer, dict[str, Any]]:
    """A tokenizer with NFKC and the configured pre-tokenizer; returns the unused params."""
    params = dict(params)
    choice = params.pop("pre_tokenizer", default_pre_tokenizer)
    if choice not in PRE_TOKENIZERS:
        valid = ", ".join(sorted(PRE_TOKENIZERS))
        raise TokstudyError(f"pre_tokenizer {choice!r} is not known; valid choices: {valid}")
    tokenizer = HFTokenizer(model)
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = PRE_TOKENIZERS[choice]()
    if choice == "metaspace":
        tokenizer.decoder = _metaspace()[1]
    return tokenizer, params


class HFBPE(HFTokenizersAdapter):
    """Byte-pair encoding (Sennrich et al., 2016) from HF ``tokenizers``."""

    name = "hf_bpe"
    lossless = True
    default_pre_tokenizer: ClassVar[str] = "metaspace"

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        tokenizer, params = _pipeline(
            models.BPE(unk_token=UNK), spec.params, cls.default_pre_tokenizer
        )
        trainer = trainers.BpeTrainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=False,
            **params,
        )
        return cls.train_pipeline(tokenizer, trainer, corpus, spec)


class HFWordPiece(HFTokenizersAdapter):
    """WordPiece (Schuster & Nakajima, 2012; BERT) from HF ``tokenizers``.

    Not deterministic: the library's trainer numbers ``##`` tokens in hash-map order and
    uses those numbers to break ties between equally frequent merges, so the last merges
    can differ between runs (huggingface/tokenizers issue 1794). Ids are renumbered in a
    fixed order, which removes every other difference.
    """

    name = "hf_wordpiece"
    deterministic = False
    default_pre_tokenizer: ClassVar[str] = "bert"

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

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        tokenizer, params = _pipeline(
            models.WordPiece(unk_token=UNK), spec.params, cls.default_pre_tokenizer
        )
        tokenizer.decoder = decoders.WordPiece(prefix=WORDPIECE_PREFIX)
        trainer = trainers.WordPieceTrainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=False,
            **params,
        )
        return cls.train_pipeline(tokenizer, trainer, corpus, spec)


class HFUnigram(HFTokenizersAdapter):
    """The Unigram language model (Kudo, 2018) from HF ``tokenizers``."""

    name = "hf_unigram"
    lossless = True
    default_pre_tokenizer: ClassVar[str] = "metaspace"

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

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        tokenizer, params = _pipeline(models.Unigram(), spec.params, cls.default_pre_tokenizer)
        trainer = trainers.UnigramTrainer(
            vocab_size=spec.vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            unk_token=UNK,
            show_progress=False,
            **params,
        )
        return cls.train_pipeline(tokenizer, trainer, corpus, spec)
