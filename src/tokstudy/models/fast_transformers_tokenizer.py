"""``transformers`` tokenizers built directly from the ``tokenizers`` library.

Used for CharacterBERT's word vocabulary, and by tests and benchmarks that need a
quickly trained subword tokenizer without going through a tokstudy adapter.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from tokstudy.tokenizers.base import CLS, MASK, PAD, SEP, SPECIAL_TOKENS, UNK


def wrap(tokenizer: Tokenizer) -> PreTrainedTokenizerFast:
    """A ``transformers`` tokenizer around ``tokenizer`` with tokstudy's special tokens."""
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token=UNK,
        pad_token=PAD,
        cls_token=CLS,
        sep_token=SEP,
        mask_token=MASK,
    )


def train_wordpiece(lines: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """A WordPiece tokenizer (NFC, whitespace + punctuation split) trained on ``lines``."""
    tokenizer = Tokenizer(models.WordPiece(unk_token=UNK))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), show_progress=False
    )
    tokenizer.train_from_iterator(lines, trainer=trainer)
    return wrap(tokenizer)


def word_level(words: Iterable[str]) -> PreTrainedTokenizerFast:
    """A whitespace word-level tokenizer: special tokens first, then ``words`` in order."""
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS)}
    for word in words:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return wrap(tokenizer)
