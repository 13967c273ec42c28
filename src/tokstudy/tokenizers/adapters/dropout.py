"""BPE-dropout (Provilkov et al., 2020): HF ``tokenizers`` BPE whose merges are dropped at
random when a model is trained on its segmentations.

Training is plain BPE (``hf_bpe``'s pipeline). The ``dropout`` probability is stored in
``tokenizer.json`` (the BPE model's ``dropout``), so the training wrapper
(:meth:`BPEDropout.to_training_transformers`), and any ``transformers`` code that loads the
file, *samples* a segmentation on every call: that is what a model trains on. As in the
paper, everything else is deterministic (the same BPE with dropout switched off): the
adapter's own encoding, which every intrinsic metric, table and analysis reads, and
:meth:`to_transformers`, which every evaluation reads (held-out bits per byte,
pseudo-perplexity, fine-tuning validation and test text). Sampling draws from the
library's own random generator, which cannot be seeded
(:meth:`BPEDropout.sampling_settings` says so). A sampled segmentation only splits
more (every piece is a vocabulary item), so it decodes to the same text.
The model stage pre-tokenizes its corpus once per tokenizer (``tokstudy.models.data``),
so a model sees one sampled segmentation of each line, not a new one every epoch as in the
paper.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tokenizers import Tokenizer as HFTokenizer

from tokstudy.tokenizers.adapters.hf_tokenizers import (
    HFBPE,
    TOKENIZER_FILE,
    HFTokenizersAdapter,
    fast_tokenizer,
    pre_tokenizer_param,
)
from tokstudy.tokenizers.base import TrainSpec
from tokstudy.tokenizers.params import Param

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast


class BPEDropout(HFBPE):
    """BPE with dropout for model training and deterministic encoding for the metrics."""

    name = "bpe_dropout"
    sampling = True
    params_spec: ClassVar[dict[str, Param]] = {
        **pre_tokenizer_param("metaspace"),
        # 1 would drop every merge
        "dropout": Param((int, float), 0.1, minimum=0.0, maximum=1.0, high_open=True),
    }

    def __init__(self, tokenizer: HFTokenizer, dropout: float | None = None) -> None:
        stored = tokenizer.model.dropout
        # tokenizer.json keeps the probability as a 32-bit float (0.1 reads 0.10000000149)
        self.dropout = round(float(dropout if dropout is not None else stored or 0.0), 6)
        tokenizer.model.dropout = None
        super().__init__(tokenizer)

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        params: dict[str, Any] = dict(spec.params)
        dropout = float(params.pop("dropout"))
        trained = super().fit(corpus, replace(spec, params=params))
        trained.dropout = dropout
        return trained

    def sampling_tokenizer(self) -> HFTokenizer:
        """A copy of the pipeline that samples (its BPE model's ``dropout`` set)."""
        copy = HFTokenizer.from_str(self._tokenizer.to_str())
        copy.model.dropout = self.dropout if self.dropout > 0 else None
        return copy

    def save(self, directory: Path) -> None:
        self.sampling_tokenizer().save(str(Path(directory) / TOKENIZER_FILE))

    def sampling_settings(self) -> dict[str, Any]:
        """BPE-dropout's probability; unseeded (``tokenizers`` has no seed for it)."""
        return {"method": "bpe_dropout", "dropout": self.dropout, "seeded": False}

    def to_training_transformers(self) -> PreTrainedTokenizerFast:
        """The fast tokenizer that samples a segmentation on every call (dropout on)."""
        return fast_tokenizer(self.sampling_tokenizer())
