"""BBPE as a ``transformers`` tokenizer (a slow, Python ``PreTrainedTokenizer``).

A ``PreTrainedTokenizerFast`` would need the whole pipeline in HF ``tokenizers``
components, and BBPE's decoding cannot be written that way: whether a space goes between
two units depends on whether both are plain words (not CJK, punctuation or whitespace),
which no ``tokenizers`` decoder can decide. This class therefore wraps :class:`BBPE`
(whose BPE itself runs in HF ``tokenizers``), with the same ids and token strings.

Special tokens: ``[UNK] [PAD] [CLS] [SEP] [MASK]`` (ids 0–4); ``add_special_tokens=True``
gives ``[CLS] a [SEP]`` / ``[CLS] a [SEP] b [SEP]`` as for BERT. Literal ``[MASK]`` in text
is tokenized as text, as the adapter does. ``save_pretrained`` writes ``bbpe.json``;
reload with ``BBPETransformersTokenizer.from_pretrained(directory)`` (offline, local).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from transformers import PreTrainedTokenizer

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import SPECIAL_TOKEN_KWARGS, UNK
from tokstudy.tokenizers.bbpe.adapter import BBPE, MODEL_FILE


class BBPETransformersTokenizer(PreTrainedTokenizer):
    """``transformers`` front end of a :class:`BBPE` model."""

    vocab_files_names = {"model_file": MODEL_FILE}  # noqa: RUF012 (transformers API)

    def __init__(self, model_file: str | None = None, *, bbpe: BBPE | None = None, **kwargs: Any):
        if bbpe is None:
            if model_file is None:
                raise TokstudyError("BBPETransformersTokenizer needs model_file or bbpe")
            bbpe = BBPE.load_file(Path(model_file))
        self.bbpe = bbpe
        self._token_ids = {token: i for i, token in enumerate(bbpe.vocab)}
        settings: dict[str, Any] = {
            **SPECIAL_TOKEN_KWARGS,
            "split_special_tokens": True,
            "clean_up_tokenization_spaces": False,
            "special_tokens_pattern": "cls_sep",
        }
        super().__init__(**{**settings, **kwargs})

    @property
    def vocab_size(self) -> int:
        """Number of tokens (special tokens included)."""
        return len(self.bbpe.vocab)

    def get_vocab(self) -> dict[str, int]:
        """Token string → id."""
        return dict(self._token_ids)

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return self.bbpe.tokenize(text)

    def _convert_token_to_id(self, token: str) -> int:
        return self._token_ids.get(token, self._token_ids[UNK])

    def _convert_id_to_token(self, index: int) -> str:
        return self.bbpe.vocab[index]

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Text of token strings (lossless for tokens from :meth:`tokenize`)."""
        return self.bbpe.detokenize(tokens)

    def save_vocabulary(
        self, save_directory: str, filename_prefix: str | None = None
    ) -> tuple[str]:
        """Write the BBPE model file into ``save_directory``."""
        name = f"{filename_prefix}-{MODEL_FILE}" if filename_prefix else MODEL_FILE
        path = os.path.join(save_directory, name)
        self.bbpe.save_file(Path(path))
        return (path,)
