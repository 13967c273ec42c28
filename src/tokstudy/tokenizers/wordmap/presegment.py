"""Wordmap pre-segmentation as a step of the HF ``tokenizers`` pipeline.

The text is first split BERT-style (whitespace and punctuation, ``BertPreTokenizer``).
Each word the tagger flags is then cut into its Wordmap segments, and every segment
becomes its own pre-token, so WordPiece never builds a token across a segment boundary.
Segments after the first one are marked as word continuations by prefixing ``##`` to the
pre-token (``versteht`` → ``ver`` ``##steh`` ``##t``). WordPiece looks a pre-token up
literally from its start, so a ``##`` pre-token yields only ``##`` pieces, and the
WordPiece decoder glues them back to the previous piece: decoding rebuilds the word with
no space inside it, and character offsets still point into the original text.

Training sees the same pre-tokens. The WordPiece trainer splits ``##steh`` into ``#``,
``###``, ``##s``, ``##t``, …; its first merges turn ``#`` + ``###`` into ``##`` and
``##`` + ``##s`` into the existing ``##s``, after which segment-initial pieces are learnt
like any other continuation piece. The marker costs the vocabulary the two entries ``##``
and ``###`` (and ``#`` when the text has none).
"""

from __future__ import annotations

from typing import Any

from tokenizers import NormalizedString, PreTokenizedString, pre_tokenizers
from tokenizers.pre_tokenizers import PreTokenizer

from tokstudy.tokenizers.wordmap.segmenter import Segmenter
from tokstudy.tokenizers.wordmap.tagging import HanTaFlagger

CONTINUATION = "##"


class WordmapPreSegmenter:
    """Splits flagged words into segments; usable as an HF custom pre-tokenizer."""

    def __init__(self, flagger: HanTaFlagger, segmenter: Segmenter) -> None:
        self.flagger = flagger
        self.segmenter = segmenter
        self._cache: dict[str, tuple[int, ...]] = {}

    def lengths(self, word: str) -> tuple[int, ...]:
        """Segment lengths of one word (the whole length when it is not segmented)."""
        if word not in self._cache:
            flagged = self.flagger.flags(word)
            self._cache[word] = self.segmenter.lengths(word) if flagged else (len(word),)
        return self._cache[word]

    def presegment(self, word: str) -> list[str]:
        """The pre-tokens of one word: its segments, continuations prefixed with ``##``."""
        pieces, start = [], 0
        for size in self.lengths(word):
            pieces.append((CONTINUATION if start else "") + word[start : start + size])
            start += size
        return pieces

    def _split(self, _index: int, normalized: NormalizedString) -> list[NormalizedString]:
        lengths = self.lengths(str(normalized))
        if len(lengths) == 1:
            return [normalized]
        pieces, start = [], 0
        for size in lengths:
            piece = normalized[start : start + size]
            if start:
                piece.prepend(CONTINUATION)
            pieces.append(piece)
            start += size
        return pieces

    def pre_tokenize(self, pretok: PreTokenizedString) -> None:
        """The HF custom pre-tokenizer hook."""
        pretok.split(self._split)

    def hf_pre_tokenizer(self) -> pre_tokenizers.PreTokenizer:
        """BERT-style word splitting followed by this segmentation (not serialisable)."""
        return pre_tokenizers.Sequence([serialisable_pre_tokenizer(), PreTokenizer.custom(self)])

    def __getstate__(self) -> dict[str, Any]:
        return {"flagger": self.flagger, "segmenter": self.segmenter}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.flagger = state["flagger"]
        self.segmenter = state["segmenter"]
        self._cache = {}


def serialisable_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """The word splitting that precedes segmentation, stored in ``tokenizer.json``."""
    return pre_tokenizers.BertPreTokenizer()
