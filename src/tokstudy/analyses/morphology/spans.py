"""Where a tokenizer cuts one word, in character offsets of the word.

Token strings do not give character spans in a uniform way (``▁`` in SentencePiece, ``##``
in WordPiece, byte symbols in byte-level BPE), so the spans come from the tokenizer's own
decoder: the word is tokenized alone, and for every ``k`` the decoded text of the first
``k`` ids is compared with the decoded text of all ids. Both are NFC-normalised and
stripped of whitespace (a decoder may add a leading space or spaces between tokens; a word
has none of its own). When the first ``k`` ids decode to a prefix of the whole, a token
boundary lies at that prefix's length. A prefix that ends inside a character (byte-level
tokens decode a partial UTF-8 sequence to ``�``) is not a prefix, so no boundary is placed
there.

The word cannot be mapped (``None``) when its ids contain the unknown token or when the
decoded whole differs from the word other than by letter case (tokenizers that lower-case
still map). A word's boundaries are those of the word tokenized alone: a SentencePiece
word gets its word-initial ``▁`` as in running text, a byte-level BPE word lacks the
leading-space symbol it would have after a space.
"""

from __future__ import annotations

import unicodedata

from tokstudy.tokenizers.base import Tokenizer


def comparable_form(text: str) -> str:
    """NFC text without whitespace: the string whose offsets boundaries refer to."""
    return "".join(unicodedata.normalize("NFC", text).split())


def token_boundaries(tokenizer: Tokenizer, word: str) -> tuple[int, ...] | None:
    """Offsets strictly inside ``word`` (whitespace removed) at which a token ends."""
    ids = tokenizer.encode(word)
    target = comparable_form(word)
    if not ids or tokenizer.unk_id in ids:
        return None
    whole = comparable_form(tokenizer.decode(ids))
    if len(whole) != len(target) or whole.lower() != target.lower():
        return None
    boundaries = set()
    for k in range(1, len(ids)):
        prefix = comparable_form(tokenizer.decode(ids[:k]))
        if 0 < len(prefix) < len(whole) and whole.startswith(prefix):
            boundaries.add(len(prefix))
    return tuple(sorted(boundaries))
