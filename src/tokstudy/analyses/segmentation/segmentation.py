"""Side-by-side segmentations of a word list (cf. the Bengali thesis's Table 3.1)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence

import pandas as pd

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

log = logging.getLogger(__name__)

SHOWN_MISSING = 10


def word_set(lines: Iterable[str]) -> frozenset[str]:
    """The whitespace-separated words of some lines."""
    return frozenset(word for line in lines for word in line.split())


def segmentation_table(
    words: Sequence[str],
    tokenizers: Mapping[str, Tokenizer],
    corpus_words: Collection[str] | None = None,
) -> pd.DataFrame:
    """One row per word, one column per tokenizer: its tokens joined by spaces.

    Tokens are shown as :meth:`Tokenizer.readable_token` gives them (GPT-2 byte symbols
    as text or hex).

    Each word is tokenized alone. With ``corpus_words`` an ``in_corpus`` column says which
    words the corpus contains; absent words are still segmented, and logged.
    """
    unique = list(dict.fromkeys(word.strip() for word in words if word.strip()))
    if not unique:
        raise TokstudyError("segmentation table: the word list is empty")
    if not tokenizers:
        raise TokstudyError("segmentation table: no tokenizers given")
    table = pd.DataFrame({"word": unique})
    if corpus_words is not None:
        table["in_corpus"] = [word in corpus_words for word in unique]
        missing = [word for word in unique if word not in corpus_words]
        if missing:
            log.warning(
                "%d of %d words are not in the corpus (segmented anyway): %s%s",
                len(missing),
                len(unique),
                ", ".join(missing[:SHOWN_MISSING]),
                ", …" if len(missing) > SHOWN_MISSING else "",
            )
    for name, tokenizer in tokenizers.items():
        vocab = tokenizer.vocab
        encoded = tokenizer.encode_batch(unique)
        table[name] = [" ".join(tokenizer.readable_token(vocab[i]) for i in ids) for ids in encoded]
    return table
