"""BBPE: byte-level BPE with word boundaries (Wei et al., 2021), adapter ``bbpe``.

Pipeline (details in :mod:`~tokstudy.tokenizers.bbpe.units`,
:mod:`~tokstudy.tokenizers.bbpe.learner` and :mod:`~tokstudy.tokenizers.bbpe.model`):

1. every CJK, punctuation and whitespace character becomes a unit of its own, runs of
   other characters are units (words); a single space between two words is implicit;
2. each unit becomes its UTF-8 bytes; the first byte is *leading*, the rest *trailing*;
3. BPE (HF ``tokenizers``) is learned inside units, so merges never cross a unit
   boundary;
4. the vocabulary holds the 5 special tokens, all 256 bytes in leading form (``E8``) and
   all 256 in trailing form (``##A4``), then the learned merges (``E895``, ``##95A4``).

The 512 byte tokens count toward the requested size: the smallest reachable size is
517 (261 with ``word_boundary: none``), a smaller request raises
:class:`~tokstudy.errors.VocabSizeError` (``size_policy: adjust`` keeps 517).
A character never seen in training falls back to byte tokens, so encoding never produces
``[UNK]`` and decoding is lossless for every string of Unicode scalar values.

Parameters (``spec.params``): ``word_boundary``: ``leading_trailing`` (default) or
``none`` (the "WWB" ablation: one form per byte, no ``##``; every whitespace character is
then an explicit token, since unit starts are no longer visible).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from tokstudy.tokenizers.base import Tokenizer, TrainSpec, corpus_lines, enforce_size_policy
from tokstudy.tokenizers.bbpe.learner import learn_bpe
from tokstudy.tokenizers.bbpe.model import MODEL_FILE, WORD_BOUNDARY_MODES, BBPEModel
from tokstudy.tokenizers.bbpe.units import symbols_to_hex
from tokstudy.tokenizers.params import Param

if TYPE_CHECKING:
    from tokstudy.tokenizers.bbpe.transformers_tokenizer import BBPETransformersTokenizer


class BBPE(BBPEModel, Tokenizer):
    """The ``bbpe`` adapter: a :class:`BBPEModel` that trains, saves and loads."""

    name = "bbpe"
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {
        "word_boundary": Param(str, "leading_trailing", choices=WORD_BOUNDARY_MODES)
    }

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> BBPE:
        """Learn merges from a corpus file; ``spec.seed`` is unused (training is deterministic)."""
        word_boundary = spec.params["word_boundary"]
        marked = word_boundary == "leading_trailing"
        vocab, merges = learn_bpe(corpus_lines(corpus), spec.vocab_size, marked)
        trained = cls(
            word_boundary,
            [symbols_to_hex(token) for token in vocab],
            [(symbols_to_hex(left), symbols_to_hex(right)) for left, right in merges],
        )
        enforce_size_policy(cls.name, spec, len(trained.vocab))
        return trained

    def save(self, directory: Path) -> None:
        """Write ``bbpe.json`` (mode, vocabulary, merges)."""
        self.save_file(Path(directory) / MODEL_FILE)

    @classmethod
    def load(cls, directory: Path) -> BBPE:
        """Read ``bbpe.json``."""
        return cls.load_file(Path(directory) / MODEL_FILE)

    def to_transformers(self) -> BBPETransformersTokenizer:
        """A slow ``transformers`` tokenizer with the same ids (see its module for why slow)."""
        from tokstudy.tokenizers.bbpe.transformers_tokenizer import BBPETransformersTokenizer

        return BBPETransformersTokenizer(bbpe=self)
