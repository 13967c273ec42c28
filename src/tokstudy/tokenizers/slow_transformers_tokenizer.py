"""One base for tokstudy's slow (Python) ``transformers`` tokenizers (bbpe, hft, hft-pretok,
morfessor).

:class:`WrapperSettings` gives every wrapper the same settings: the five special tokens,
``[CLS] … [SEP]`` wrapping, special-token text inside the input tokenized as text (as the
adapters do) and no English clean-up of spaces. :class:`TokenListTokenizer` adds what a
wrapper whose ids index a token list needs; a subclass implements ``_tokenize``,
``convert_tokens_to_string`` and ``save_vocabulary``.
"""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

from transformers import PreTrainedTokenizer

from tokstudy.tokenizers.base import SPECIAL_TOKEN_KWARGS, UNK, Tokenizer

WRAPPER_SETTINGS: dict[str, Any] = {
    **SPECIAL_TOKEN_KWARGS,
    "split_special_tokens": True,
    "special_tokens_pattern": "cls_sep",
    "clean_up_tokenization_spaces": False,
}


class WrapperSettings:
    """Mixin placed before a ``transformers`` tokenizer class: tokstudy's settings as
    defaults of its keyword arguments (given ones win)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**WRAPPER_SETTINGS, **kwargs})


class TokenListTokenizer(WrapperSettings, PreTrainedTokenizer):
    """A slow ``transformers`` tokenizer whose ids index ``tokens``."""

    def __init__(self, tokens: list[str], **kwargs: Any) -> None:
        self.tokens = tokens
        self._token_ids = {token: i for i, token in enumerate(tokens)}
        super().__init__(**kwargs)

    @property
    def vocab_size(self) -> int:
        """Entries of the base vocabulary (special tokens included)."""
        return len(self.tokens)

    def get_vocab(self) -> dict[str, int]:
        """Token → id, added tokens included."""
        return {**self._token_ids, **self.added_tokens_encoder}

    def _convert_token_to_id(self, token: str) -> int:
        return self._token_ids.get(token, self._token_ids[UNK])

    def _convert_id_to_token(self, index: int) -> str:
        return self.tokens[index]


class SegmenterTokenizer(TokenListTokenizer):
    """A slow ``transformers`` tokenizer around a tokstudy adapter written in Python
    (``morfessor``): its tokens are the adapter's encoding, its text the adapter's decoding.

    ``save_pretrained`` writes the token list only; the adapter's own folder is what loads.
    """

    vocab_files_names: ClassVar[dict[str, str]] = {"vocab_file": "vocab.json"}

    def __init__(self, adapter: Tokenizer, **kwargs: Any) -> None:
        self.adapter = adapter
        super().__init__(list(adapter.vocab), **kwargs)

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return self.adapter.tokenize(text)

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """The adapter's decoding of the tokens' ids."""
        return self.adapter.decode([self._convert_token_to_id(token) for token in tokens])

    def save_vocabulary(
        self, save_directory: str, filename_prefix: str | None = None
    ) -> tuple[str]:
        """Write the token list (``vocab.json``) into ``save_directory``."""
        name = f"{filename_prefix}-vocab.json" if filename_prefix else "vocab.json"
        path = os.path.join(save_directory, name)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.tokens, handle, ensure_ascii=False)
        return (path,)
