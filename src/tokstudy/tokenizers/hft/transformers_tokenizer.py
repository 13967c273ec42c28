"""A ``transformers`` (Python backend) tokenizer for a trained HFT vocabulary.

It encodes exactly like the ``hft`` adapter (same ids; ``[CLS] … [SEP]`` added around a
sequence when ``add_special_tokens`` is set) and works offline with ``save_pretrained`` /
``from_pretrained`` on a local directory (files ``hft_vocab.tsv`` and
``tokenizer_config.json``, which records the marks). Special-token strings inside the text
are tokenized as text (``split_special_tokens=True``), as the adapter does.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from tokstudy.tokenizers.base import SPECIAL_TOKENS
from tokstudy.tokenizers.hft.encoder import HFTEncoder
from tokstudy.tokenizers.hft.pretokenize import Marks
from tokstudy.tokenizers.hft.vocab import HFTVocab
from tokstudy.tokenizers.slow_transformers_tokenizer import TokenListTokenizer

VOCAB_FILE = "hft_vocab.tsv"


class HFTTransformersTokenizer(TokenListTokenizer):
    """HFT as a ``transformers.PreTrainedTokenizer``."""

    vocab_files_names: ClassVar[dict[str, str]] = {"vocab_file": VOCAB_FILE}
    model_input_names: ClassVar[list[str]] = ["input_ids", "token_type_ids", "attention_mask"]

    def __init__(self, vocab_file: str, marks: dict[str, str] | None = None, **kwargs: Any) -> None:
        """``vocab_file``: an ``hft_vocab.tsv``; ``marks``: the adapter's ``marks`` param."""
        self.hft_vocab = HFTVocab.read_tsv(vocab_file)
        self.hft_marks = Marks.from_param(marks)
        self._encoder = HFTEncoder(self.hft_vocab, self.hft_marks, SPECIAL_TOKENS)
        super().__init__(self._encoder.tokens, marks=self.hft_marks.as_dict(), **kwargs)

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        tokens = self._encoder.tokens
        return [tokens[i] for i in self._encoder.encode_lines([text], where="hft tokenize")[0]]

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Text of tokens: the HFT marks are resolved, ``[UNK]`` becomes U+FFFD."""
        return self._encoder.decode_tokens(tokens)

    def save_vocabulary(
        self, save_directory: str, filename_prefix: str | None = None
    ) -> tuple[str, ...]:
        """Write ``hft_vocab.tsv`` (with an optional ``prefix-``) into ``save_directory``."""
        prefix = f"{filename_prefix}-" if filename_prefix else ""
        path = os.path.join(save_directory, prefix + VOCAB_FILE)
        self.hft_vocab.write_tsv(path)
        return (path,)
