"""CharacterBERT's units: words spelled as rows of character ids, and its vocabularies.

Each whitespace word is spelled as ``[BOW] c1 … cn [EOW]`` (at most ``max_word_chars``
character ids); the special words have one id each. Any word has a spelling, so input
words are never unknown; the MLM's output vocabulary is the top-N training words.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from transformers import PreTrainedTokenizerFast

from tokstudy.files.lines import batched, iter_nonblank_lines
from tokstudy.models.config import CharBertConfig
from tokstudy.models.fast_transformers_tokenizer import word_level
from tokstudy.tokenizers.base import CLS, PAD, SEP, SPECIAL_TOKENS, UNK

CHAR_PAD, CHAR_UNK, BOW, EOW = 0, 1, 2, 3
#: character ids 4 … 8 spell the special words [UNK] [PAD] [CLS] [SEP] [MASK]
FIRST_SPECIAL_CHAR = 4
FIRST_CHAR = FIRST_SPECIAL_CHAR + len(SPECIAL_TOKENS)
CHARS_FILE = "chars.json"


class Speller:
    """Turns words into fixed-length rows of character ids."""

    def __init__(self, chars: tuple[str, ...], max_word_chars: int) -> None:
        self.chars = tuple(chars)
        self.max_word_chars = max_word_chars
        self._index = {c: FIRST_CHAR + i for i, c in enumerate(self.chars)}

    @property
    def n_char_ids(self) -> int:
        """Size of the character embedding table."""
        return FIRST_CHAR + len(self.chars)

    def spell(self, word: str) -> np.ndarray:
        """``[BOW] chars [EOW]`` padded with 0 (long words cut); special words get one id."""
        row = np.full(self.max_word_chars, CHAR_PAD, dtype=np.uint16)
        if word in SPECIAL_TOKENS:
            ids = [BOW, FIRST_SPECIAL_CHAR + SPECIAL_TOKENS.index(word), EOW]
        else:
            body = word[: self.max_word_chars - 2]
            ids = [BOW, *(self._index.get(c, CHAR_UNK) for c in body), EOW]
        row[: len(ids)] = ids
        return row

    def spell_all(self, words: list[str]) -> np.ndarray:
        """Rows for a list of words (shape ``(len(words), max_word_chars)``)."""
        if not words:
            return np.zeros((0, self.max_word_chars), dtype=np.uint16)
        return np.stack([self.spell(w) for w in words])

    def save(self, directory: Path) -> None:
        """Write ``chars.json``."""
        payload = {"chars": list(self.chars), "max_word_chars": self.max_word_chars}
        (Path(directory) / CHARS_FILE).write_text(json.dumps(payload), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Speller:
        """Read ``chars.json``."""
        payload = json.loads((Path(directory) / CHARS_FILE).read_text(encoding="utf-8"))
        return cls(tuple(payload["chars"]), payload["max_word_chars"])


def build_vocabularies(
    text_path: Path, config: CharBertConfig
) -> tuple[PreTrainedTokenizerFast, Speller]:
    """Word vocabulary (top-N words) and character vocabulary of a training text."""
    words: Counter[str] = Counter()
    for chunk in batched(iter_nonblank_lines(text_path), 5000):
        for line in chunk:
            words.update(line.split())
    chars: Counter[str] = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    n_words = config.word_vocab_size - len(SPECIAL_TOKENS)
    top_words = [w for w, _ in sorted(words.items(), key=lambda wc: (-wc[1], wc[0]))[:n_words]]
    top_chars = [c for c, _ in sorted(chars.items(), key=lambda cc: (-cc[1], cc[0]))]
    speller = Speller(tuple(top_chars[: config.max_chars]), config.max_word_chars)
    return word_level(top_words), speller


class SpellingTokenizer:
    """The tokenizer interface fine-tuning uses, for CharacterBERT: a unit per word.

    ``tokenizer(texts)["input_ids"]`` gives each text's whitespace words as character-id
    rows (tuples); the special "ids" are the rows of the special words.
    """

    def __init__(self, speller: Speller) -> None:
        self.speller = speller
        self.cls_token_id, self.sep_token_id, self.pad_token_id, self.unk_token_id = (
            tuple(speller.spell(token).tolist()) for token in (CLS, SEP, PAD, UNK)
        )

    def __call__(
        self, texts: list[str], *, add_special_tokens: bool = False
    ) -> dict[str, list[list[tuple[int, ...]]]]:
        """Spelled words of each text (special tokens are never added)."""
        return {
            "input_ids": [
                [tuple(row) for row in self.speller.spell_all(text.split()).tolist()]
                for text in texts
            ]
        }
