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
import logging
from collections.abc import Sequence
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any

from tokstudy.errors import TokstudyError, VocabSizeError
from tokstudy.tokenizers.base import SPECIAL_TOKENS, Tokenizer, TrainSpec
from tokstudy.tokenizers.hft.encoder import HFTEncoder
from tokstudy.tokenizers.hft.learn import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_STEP_FRACTION,
    count_pretokens,
    learn_vocabulary,
    step_size,
)
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer, read_lines
from tokstudy.tokenizers.hft.vocab import HFTVocab

if TYPE_CHECKING:
    from tokstudy.tokenizers.hft.hf_wrapper import HFTTransformersTokenizer

log = logging.getLogger(__name__)

VOCAB_FILE = "hft_vocab.tsv"
CONFIG_FILE = "hft_config.json"
PARAMS = ("step_fraction", "max_iterations", "marks")
SIZE_POLICIES = ("error", "adjust")


def checked_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with defaults filled in; unknown or ill-typed ones raise TokstudyError."""
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise TokstudyError(f"hft: unknown params {unknown}; valid: {', '.join(PARAMS)}")
    out = {
        "step_fraction": params.get("step_fraction", DEFAULT_STEP_FRACTION),
        "max_iterations": params.get("max_iterations", DEFAULT_MAX_ITERATIONS),
        "marks": Marks.from_param(params.get("marks")).as_dict(),
    }
    if isinstance(out["step_fraction"], bool) or not isinstance(out["step_fraction"], int | float):
        raise TokstudyError(
            f"hft param 'step_fraction' must be a number, got {out['step_fraction']!r}"
        )
    max_iterations = out["max_iterations"]
    if (
        isinstance(max_iterations, bool)
        or not isinstance(max_iterations, int)
        or max_iterations < 1
    ):
        raise TokstudyError(
            f"hft param 'max_iterations' must be an integer ≥ 1, got {max_iterations!r}"
        )
    return out


class HFT(Tokenizer):
    """High Frequency Tokenizer; lossless for text whose characters were seen in training."""

    name = "hft"
    sized = True
    lossless = True

    def __init__(self, vocab: HFTVocab, params: dict[str, Any]) -> None:
        self.hft_vocab = vocab
        self.params = params
        self.marks = Marks.from_param(params["marks"])
        self._encoder = HFTEncoder(vocab, self.marks, SPECIAL_TOKENS)

    @classmethod
    def train(cls, corpus: Path, spec: TrainSpec) -> HFT:
        """Learn ``spec.vocab_size`` entries (special tokens and marks included)."""
        params = checked_params(spec.params)
        if spec.size_policy not in SIZE_POLICIES:
            raise TokstudyError(
                f"size_policy must be one of {', '.join(SIZE_POLICIES)}, got {spec.size_policy!r}"
            )
        if spec.vocab_size is None:
            raise TokstudyError(f"{cls.name} ({spec.label}): a vocabulary size is required")
        marks = Marks.from_param(params["marks"])
        counts = count_pretokens(read_lines(corpus), Pretokenizer(marks), str(corpus))
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
            bound = "smallest" if result.outcome == "too_small" else "largest"
            message = (
                f"{cls.name} ({spec.label}): vocabulary size {spec.vocab_size} cannot be "
                f"reached; the {bound} reachable size is {reached} ({len(SPECIAL_TOKENS)} "
                f"special tokens + {len(result.vocab)} HFT entries, {result.n_characters} of "
                "them characters and marks)"
            )
            if spec.size_policy == "error":
                raise VocabSizeError(message)
            log.warning("%s; keeping %d entries (size_policy 'adjust')", message, reached)
        return cls(result.vocab, params)

    def encode_batch(self, lines: Sequence[str]) -> list[list[int]]:
        """Ids of each line; mark characters in a line raise TokstudyError."""
        return self._encoder.encode_lines(lines, where="hft encode")

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
            params = checked_params(config["params"])
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise TokstudyError(f"{config_path}: invalid hft config ({err})") from None
        return cls(HFTVocab.read_tsv(Path(directory) / VOCAB_FILE), params)

    def to_transformers(self) -> HFTTransformersTokenizer:
        """A ``transformers`` tokenizer with the same ids (see :mod:`.hf_wrapper`)."""
        from tokstudy.tokenizers.hft.hf_wrapper import HFTTransformersTokenizer

        with TemporaryDirectory() as tmp:
            self.hft_vocab.write_tsv(Path(tmp) / VOCAB_FILE)
            return HFTTransformersTokenizer(
                vocab_file=str(Path(tmp) / VOCAB_FILE), marks=self.params["marks"]
            )
