"""A ``transformers`` fast tokenizer that runs the Wordmap pre-segmentation.

The segmentation step is Python code plugged into the HF ``tokenizers`` pipeline
(``PreTokenizer.custom``), which the library cannot serialise. The wrapper is therefore
built from the serialisable pipeline and gets the custom step attached afterwards; pickling
swaps it out and back in. ``save_pretrained`` is refused: a saved copy would silently
tokenize without the segmentation.
"""

from __future__ import annotations

from typing import Any

from tokenizers import Tokenizer as HFTokenizer
from transformers import PreTrainedTokenizerFast

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import SPECIAL_TOKEN_KWARGS
from tokstudy.tokenizers.wordmap.presegment import WordmapPreSegmenter, serialisable_pre_tokenizer


class WordmapTokenizerFast(PreTrainedTokenizerFast):
    """``PreTrainedTokenizerFast`` whose backend pre-segments with Wordmap."""

    _presegmenter: WordmapPreSegmenter

    @classmethod
    def wrap(cls, backend: HFTokenizer, presegmenter: WordmapPreSegmenter) -> WordmapTokenizerFast:
        """Wrap a serialisable backend and attach the pre-segmentation step to it."""
        wrapped = cls(tokenizer_object=backend, **SPECIAL_TOKEN_KWARGS)
        wrapped._presegmenter = presegmenter
        wrapped._tokenizer.pre_tokenizer = presegmenter.hf_pre_tokenizer()
        return wrapped

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        custom = self._tokenizer.pre_tokenizer
        self._tokenizer.pre_tokenizer = serialisable_pre_tokenizer()
        try:
            state["_tokenizer"] = HFTokenizer.from_str(self._tokenizer.to_str())
        finally:
            self._tokenizer.pre_tokenizer = custom
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tokenizer.pre_tokenizer = self._presegmenter.hf_pre_tokenizer()

    def save_pretrained(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: the Wordmap step cannot be stored in ``tokenizer.json``."""
        raise TokstudyError(
            "wordmap_wordpiece: save_pretrained would drop the Wordmap pre-segmentation; "
            "keep the tokstudy tokenizer directory and rebuild with "
            "load_tokenizer(directory).to_transformers()"
        )
