"""Unigram with subword regularisation (Kudo, 2018): SentencePiece's Unigram model whose
training wrapper samples a segmentation on every call.

Training is ``sp_unigram``'s (same parameters and defaults). ``alpha`` (the smoothing of
the sampling distribution, 0.1) and ``nbest_size`` (-1: sample from every segmentation by
forward-filtering and backward-sampling; ``k`` > 1: from the ``k`` best) are stored in
``sampling.json`` and go to SentencePiece's own sampler (``enable_sampling``) in the
training wrapper (:meth:`SampledUnigram.to_training_transformers`): a model trains on
sampled segmentations. As in the paper, everything else reads the Viterbi segmentation,
equal to ``sp_unigram`` trained on the same text: the adapter's encoding (every intrinsic
metric, table and analysis) and :meth:`to_transformers` (every evaluation: held-out bits
per byte, pseudo-perplexity, fine-tuning validation and test text). SentencePiece's
sampler draws from its own generator: ``spm.set_random_generator_seed`` repeats its draws
within a process but not in another (sentencepiece 0.2.3, measured), so the samples are
recorded as unseeded (:meth:`SampledUnigram.sampling_settings`).
The model stage pre-tokenizes its corpus once per tokenizer (``tokstudy.models.data``),
so a model sees one sampled segmentation of each line, not a new one every epoch as in the
paper.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.adapters.sentencepiece import (
    MODEL_FILE,
    SENTENCEPIECE_PARAMS,
    SentencePieceTokenizer,
    SentencePieceUnigram,
)
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.params import Param, param_key

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

SAMPLING_FILE = "sampling.json"


class SampledUnigram(SentencePieceUnigram):
    """SentencePiece Unigram; Viterbi for the metrics, sampling in the model stage."""

    name = "unigram_sampling"
    sampling = True
    params_spec: ClassVar[dict[str, Param]] = {
        **SENTENCEPIECE_PARAMS,
        "alpha": Param((int, float), 0.1, minimum=0.0),
        "nbest_size": Param(int, -1, minimum=-1),
    }

    def __init__(self, model_proto: bytes, alpha: float = 0.1, nbest_size: int = -1) -> None:
        super().__init__(model_proto)
        self.alpha, self.nbest_size = float(alpha), int(nbest_size)

    @classmethod
    def check_params(
        cls, params: Mapping[str, Any] | None, name: str | None = None
    ) -> dict[str, Any]:
        """As declared, and ``nbest_size`` -1 or at least 2 (0 and 1 would not sample)."""
        checked = super().check_params(params, name)
        if checked["nbest_size"] in (0, 1):
            raise TokstudyError(
                f"{param_key(name or cls.name, 'nbest_size')}: must be -1 or at least 2, "
                f"got {checked['nbest_size']}"
            )
        return checked

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> SentencePieceTokenizer:
        params = dict(spec.params)
        alpha, nbest_size = params.pop("alpha", None), params.pop("nbest_size", None)
        trained = super().fit(corpus, replace(spec, params=params))
        if alpha is not None:  # the outermost call (fit retries at a reachable size)
            trained.alpha, trained.nbest_size = float(alpha), int(nbest_size)
        return trained

    def save(self, directory: Path) -> None:
        super().save(directory)
        settings = {"alpha": self.alpha, "nbest_size": self.nbest_size}
        (Path(directory) / SAMPLING_FILE).write_text(json.dumps(settings), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> SampledUnigram:
        settings = json.loads((Path(directory) / SAMPLING_FILE).read_text(encoding="utf-8"))
        return cls((Path(directory) / MODEL_FILE).read_bytes(), **settings)

    def sampling_settings(self) -> dict[str, Any]:
        """SentencePiece's sampler settings; unseeded: sentencepiece 0.2.3's
        ``set_random_generator_seed`` repeats draws within a process, not across two."""
        return {
            "method": "unigram_sampling",
            "alpha": self.alpha,
            "nbest_size": self.nbest_size,
            "seeded": False,
        }

    def to_training_transformers(self) -> PreTrainedTokenizerBase:
        """SentencePiece's ``transformers`` tokenizer with its sampler on."""
        return self._backend(enable_sampling=True, alpha=self.alpha, nbest_size=self.nbest_size)
