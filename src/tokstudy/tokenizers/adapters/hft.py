"""The ``hft`` adapter: HFT behind the :class:`~tokstudy.tokenizers.base.Tokenizer` interface.

Ids: the five special tokens ``[UNK] [PAD] [CLS] [SEP] [MASK]`` (0–4), then the HFT
vocabulary: the five marks, the characters, the longer subwords. ``vocab_size`` counts all
of them, so HFT learns ``vocab_size - 5`` entries.

Params (``TrainSpec.params``): ``step_fraction`` (share of the HFT size added per iteration,
default 0.05), ``max_iterations`` (iterations with removal, default 1000), ``marks``
(``{name: character}`` overriding the default Private Use Area marks).

Files written by :meth:`HFT.save`: ``hft_vocab.tsv`` (``token<TAB>training frequency`` in
id order, special tokens excluded) and ``hft_config.json`` (marks and training params).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any, ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import (
    SPECIAL_TOKENS,
    Tokenizer,
    TokenStarts,
    TrainSpec,
    corpus_lines,
    enforce_size_policy,
)
from tokstudy.tokenizers.hft.encoder import HFTEncoder
from tokstudy.tokenizers.hft.learn import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_STEP_FRACTION,
    count_pretokens,
    learn_vocabulary,
    step_size,
)
from tokstudy.tokenizers.hft.pretokenize import MARKS_PARAM, Marks, Pretokenizer
from tokstudy.tokenizers.hft.vocab import HFTVocab
from tokstudy.tokenizers.params import Param

if TYPE_CHECKING:
    from tokstudy.tokenizers.hft.transformers_tokenizer import HFTTransformersTokenizer

VOCAB_FILE = "hft_vocab.tsv"
CONFIG_FILE = "hft_config.json"


class HFT(Tokenizer):
    """High Frequency Tokenizer; lossless for text whose characters were seen in training."""

    name = "hft"
    sized = True
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {
        "step_fraction": Param(
            (int, float), DEFAULT_STEP_FRACTION, minimum=0, maximum=1, low_open=True
        ),
        "max_iterations": Param(int, DEFAULT_MAX_ITERATIONS, minimum=1),
        "marks": MARKS_PARAM,
    }

    @classmethod
    def check_params(cls, params: dict[str, Any] | None, name: str | None = None) -> dict[str, Any]:
        """The declared check, with ``marks`` completed to all five marks."""
        checked = super().check_params(params, name)
        checked["marks"] = Marks.from_param(checked["marks"]).as_dict()
        return checked

    def __init__(self, vocab: HFTVocab, params: dict[str, Any]) -> None:
        self.hft_vocab = vocab
        self.params = params
        self.marks = Marks.from_param(params["marks"])
        self._encoder = HFTEncoder(vocab, self.marks, SPECIAL_TOKENS)

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFT:
        """Learn ``spec.vocab_size`` entries (special tokens and marks included)."""
        params = spec.params
        marks = Marks.from_param(params["marks"])
        counts = count_pretokens(corpus_lines(corpus), Pretokenizer(marks), str(corpus))
        if not counts:
            raise TokstudyError(f"{corpus}: no text to train hft on (empty corpus)")
        target = spec.vocab_size - len(SPECIAL_TOKENS)
        result = learn_vocabulary(
            counts,
            target,
            marks,
            step_size(max(target, 1), params["step_fraction"]),
            params["max_iterations"],
        )
        reached = len(result.vocab) + len(SPECIAL_TOKENS)
        if result.outcome != "target":
            detail = (
                f" ({len(SPECIAL_TOKENS)} special tokens + {len(result.vocab)} HFT entries, "
                f"{result.n_characters} of them characters and marks)"
            )
            enforce_size_policy(cls.name, spec, reached, detail)
        return cls(result.vocab, params)

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Ids of each line; mark characters in a line raise TokstudyError."""
        return self._encoder.encode_lines(lines, where="hft encode")

    def encode_batch_starts(self, lines: Sequence[str]) -> TokenStarts:
        """Ids of a batch with the generic decoded-prefix starts, computed part by part."""
        return self._encoder.encode_starts(lines, where="hft encode")

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``; ``[UNK]`` decodes to U+FFFD."""
        return self._encoder.decode(ids)

    @property
    def pretokenizer(self) -> Pretokenizer:
        """The pre-tokenizer with this tokenizer's marks."""
        return self._encoder.pretokenizer

    @property
    def vocab(self) -> list[str]:
        """Special tokens, then the HFT entries."""
        return self._encoder.tokens

    def save(self, directory: Path) -> None:
        """Write ``hft_vocab.tsv`` and ``hft_config.json`` into ``directory``."""
        directory = Path(directory)
        self.hft_vocab.write_tsv(directory / VOCAB_FILE)
        config = {"params": self.params, "special_tokens": list(SPECIAL_TOKENS)}
        (directory / CONFIG_FILE).write_text(
            json.dumps(config, indent=2, ensure_ascii=True) + "\n", encoding="utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> HFT:
        """Read what :meth:`save` wrote."""
        config_path = Path(directory) / CONFIG_FILE
        if not config_path.is_file():
            raise TokstudyError(f"{directory}: no {CONFIG_FILE}")
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
            params = cls.check_params(config["params"])
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as err:
            raise TokstudyError(f"{config_path}: invalid hft config ({err})") from None
        return cls(HFTVocab.read_tsv(Path(directory) / VOCAB_FILE), params)

    def to_transformers(self) -> HFTTransformersTokenizer:
        """A ``transformers`` tokenizer with the same ids (see :mod:`.hf_wrapper`)."""
        from tokstudy.tokenizers.hft.transformers_tokenizer import HFTTransformersTokenizer

        with TemporaryDirectory() as tmp:
            self.hft_vocab.write_tsv(Path(tmp) / VOCAB_FILE)
            return HFTTransformersTokenizer(
                vocab_file=str(Path(tmp) / VOCAB_FILE), marks=self.params["marks"]
            )
