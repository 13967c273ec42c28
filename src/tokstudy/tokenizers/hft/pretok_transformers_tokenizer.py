"""The ``transformers`` tokenizer of the SentencePiece-on-HFT-pre-tokens adapters.

A module of its own so that training and metric jobs, which never call
:meth:`~tokstudy.tokenizers.adapters.hft_pretok._PretokenizedSentencePiece.to_transformers`,
do not import ``transformers``.
"""

from __future__ import annotations

from typing import Any

from transformers.tokenization_utils_sentencepiece import SentencePieceBackend

from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer, pieces_to_text
from tokstudy.tokenizers.slow_transformers_tokenizer import WrapperSettings


class HFTSentencePieceTokenizer(WrapperSettings, SentencePieceBackend):
    """``transformers`` tokenizer: HFT pre-tokenization, then the SentencePiece model."""

    def __init__(self, vocab_file: str, marks: dict[str, str] | None = None, **kwargs: Any):
        """``vocab_file``: a SentencePiece model; ``marks``: the ``marks`` param."""
        self.hft_marks = Marks.from_param(marks)
        self._pretokenizer = Pretokenizer(self.hft_marks)
        super().__init__(vocab_file=vocab_file, marks=self.hft_marks.as_dict(), **kwargs)

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        pretokens = self._pretokenizer.pretokenize(text, "hft tokenize")
        return self.sp_model.encode(" ".join(pretokens), out_type=str)

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Text of pieces (pre-tokenization undone)."""
        return pieces_to_text(tokens, self._pretokenizer)
