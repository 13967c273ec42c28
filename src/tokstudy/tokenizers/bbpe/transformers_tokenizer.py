"""BBPE as a ``transformers`` tokenizer (a slow, Python ``PreTrainedTokenizer``).

A ``PreTrainedTokenizerFast`` would need the whole pipeline in HF ``tokenizers``
components, and BBPE's decoding cannot be written that way: whether a space goes between
two units depends on whether both are plain words (not CJK, punctuation or whitespace),
which no ``tokenizers`` decoder can decide. This class therefore wraps a BBPE model (:mod:`.model`)
(whose BPE itself runs in HF ``tokenizers``), with the same ids and token strings.

Special tokens: ``[UNK] [PAD] [CLS] [SEP] [MASK]`` (ids 0–4); ``add_special_tokens=True``
gives ``[CLS] a [SEP]`` / ``[CLS] a [SEP] b [SEP]`` as for BERT. Literal ``[MASK]`` in text
is tokenized as text, as the adapter does. ``save_pretrained`` writes ``bbpe.json``;
reload with ``BBPETransformersTokenizer.from_pretrained(directory)`` (offline, local).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.bbpe.model import MODEL_FILE, BBPEModel
from tokstudy.tokenizers.slow_transformers_tokenizer import TokenListTokenizer


class BBPETransformersTokenizer(TokenListTokenizer):
    """``transformers`` front end of a BBPE model."""

    vocab_files_names: ClassVar[dict[str, str]] = {"model_file": MODEL_FILE}

    def __init__(
        self, model_file: str | None = None, *, bbpe: BBPEModel | None = None, **kwargs: Any
    ):
        if bbpe is None:
            if model_file is None:
                raise TokstudyError("BBPETransformersTokenizer needs model_file or bbpe")
            bbpe = BBPEModel.load_file(Path(model_file))
        self.bbpe = bbpe
        super().__init__(bbpe.vocab, **kwargs)

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return self.bbpe.tokenize(text)

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
