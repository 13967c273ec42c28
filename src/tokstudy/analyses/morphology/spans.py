"""Where a tokenizer cuts one word, in character offsets of the word.

Token strings do not give character spans in a uniform way (``▁`` in SentencePiece, ``##``
in WordPiece, byte symbols in byte-level BPE), so the spans come from the tokenizer's own
decoder: the word is tokenized, and for every ``k`` the decoded text of the first ``k`` ids
is compared with the decoded text of all ids. Both are NFC-normalised and stripped of
whitespace (a decoder may add a leading space or spaces between tokens; a word has none of
its own). When the first ``k`` ids decode to a prefix of the whole, a token boundary lies
at that prefix's length. A prefix that ends inside a character (byte-level tokens decode a
partial UTF-8 sequence to ``�``) is not a prefix, so no boundary is placed there.

The word cannot be mapped (``None``) when its ids contain the unknown token or when the
decoded whole differs from the word other than by letter case (tokenizers that lower-case
still map).

**Encodings.** A word is tokenized either ``in_context``, after a space as in running text
(``" houses"``), or ``alone`` (``"houses"``, what MorphScore's code does). The space is
whitespace, so it is stripped with the rest and the offsets are those of the word; a token
that holds only the space ends at offset 0, which is no boundary. The two differ wherever a
tokenizer marks the word start with the space itself: byte-level BPE's ``Ġ`` and the ``▁`` of
a SentencePiece-style tokenizer without a dummy prefix (Gemma 2 and 3: ``houses`` →
``['houses']``, ``" houses"`` → ``['▁houses']``; GPT-4o: ``walked`` → ``['walk', 'ed']``,
``" walked"`` → ``['Ġwalked']``). A tokenizer that adds ``▁`` to every text itself
(SentencePiece's dummy prefix: the trained ``sp_*`` cells, Llama 2) and one that splits on
whitespace first (WordPiece) cut a word the same way in both.
"""

from __future__ import annotations

import unicodedata

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

#: a word after a space, as in running text (the default of the analyses)
IN_CONTEXT = "in_context"
#: a word on its own, with nothing before it
ALONE = "alone"
#: the encodings, the default first
ENCODINGS = (IN_CONTEXT, ALONE)


def comparable_form(text: str) -> str:
    """NFC text without whitespace: the string whose offsets boundaries refer to."""
    return "".join(unicodedata.normalize("NFC", text).split())


def encoded_text(word: str, encoding: str) -> str:
    """The text tokenized for ``word`` in ``encoding`` (see the module docstring)."""
    if encoding == IN_CONTEXT:
        return f" {word}"
    if encoding == ALONE:
        return word
    raise TokstudyError(f"unknown encoding {encoding!r} (one of {', '.join(ENCODINGS)})")


def token_boundaries(tokenizer: Tokenizer, word: str, encoding: str) -> tuple[int, ...] | None:
    """Offsets strictly inside ``word`` (whitespace removed) at which a token ends, the word
    tokenized in ``encoding`` (:data:`IN_CONTEXT` or :data:`ALONE`)."""
    ids = tokenizer.encode(encoded_text(word, encoding))
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
