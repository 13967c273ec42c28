"""GPT-2-style byte-level BPE from HF ``tokenizers`` (``hf_bytelevel_bpe``).

Text is split by the GPT-2 regex and mapped to bytes (``ByteLevel`` pre-tokenizer, no
normaliser), BPE is learned over the 256 byte symbols (all of them always in the
vocabulary) and the ``ByteLevel`` decoder maps tokens back to bytes. So encoding never
produces ``[UNK]`` and ``decode(encode(text)) == text`` for every string of Unicode scalar
values, with one documented exception: with ``add_prefix_space: true`` a text that does
not start with a space is encoded as if it did, and decodes with that leading space.
Literal special-token text such as ``[MASK]`` in the input is encoded as bytes, like any
other text.

Parameters (``spec.params``): ``add_prefix_space`` (bool, default ``false``).
The requested vocabulary size counts the 5 special tokens and the 256 byte tokens, so the
smallest reachable size is 261. Training is deterministic (``spec.seed`` is unused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

from tokstudy.tokenizers.adapters.hf_tokenizers import HFTokenizersAdapter, fast_tokenizer
from tokstudy.tokenizers.base import SPECIAL_TOKENS, UNK, TrainSpec
from tokstudy.tokenizers.byte_symbols import byte_of_symbol, readable_bytes
from tokstudy.tokenizers.params import Param

if TYPE_CHECKING:
    from pathlib import Path

    from transformers import PreTrainedTokenizerFast


class HFByteLevelBPE(HFTokenizersAdapter):
    """Byte-level BPE (GPT-2 style) trained with HF ``tokenizers``."""

    name = "hf_bytelevel_bpe"
    lossless = True
    params_spec: ClassVar[dict[str, Param]] = {"add_prefix_space": Param(bool, False)}

    def __init__(self, tokenizer: HFTokenizer) -> None:
        tokenizer.encode_special_tokens = True  # "[UNK]" in text is text: never an [UNK] id
        super().__init__(tokenizer)

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        """Train on a corpus file, streaming it."""
        tokenizer = HFTokenizer(models.BPE(unk_token=UNK))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=spec.params["add_prefix_space"], use_regex=True
        )
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=spec.vocab_size,
            show_progress=False,
            special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        return cls.train_pipeline(tokenizer, trainer, corpus, spec)

    def readable_token(self, token: str) -> str:
        """The text of a token's bytes (a space as ``▁``); bytes that are not whole UTF-8
        characters as upper-case hex (``E0A4``), as ``bbpe`` writes its byte tokens."""
        if token in SPECIAL_TOKENS:
            return token
        return readable_bytes(bytes(byte_of_symbol()[symbol] for symbol in token))

    def to_transformers(self) -> PreTrainedTokenizerFast:
        """A fast ``transformers`` tokenizer with the same ids; adds ``[CLS] … [SEP]``.

        Like the adapter, it encodes literal special-token text as bytes
        (``split_special_tokens``, kept by ``save_pretrained``).
        """
        wrapped = fast_tokenizer(self._tokenizer)
        wrapped.split_special_tokens = True
        wrapped.init_kwargs["split_special_tokens"] = True
        return wrapped
