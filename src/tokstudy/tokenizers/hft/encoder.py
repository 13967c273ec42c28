"""Text ↔ ids with a trained HFT vocabulary: pre-tokenizer, segmenter and a per-part cache."""

from __future__ import annotations

from collections.abc import Sequence

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import UNK
from tokstudy.tokenizers.hft.pretokenize import Marks, Pretokenizer
from tokstudy.tokenizers.hft.segment import Segmenter
from tokstudy.tokenizers.hft.vocab import HFTVocab

#: what an [UNK] id decodes to (one per unknown character)
UNK_TEXT = "\ufffd"


class HFTEncoder:
    """Encodes with ids ``specials`` first, then the HFT vocabulary in its order.

    A character that is not in the vocabulary becomes one ``[UNK]`` (and cuts its word
    there); ``[UNK]`` decodes to U+FFFD. Other special tokens decode to their own string.
    Results are cached per word or gap, so repeated words cost a dictionary lookup.
    """

    def __init__(
        self,
        vocab: HFTVocab,
        marks: Marks,
        specials: Sequence[str],
        cache_size: int = 1_000_000,
    ) -> None:
        self.hft_vocab = vocab
        self.pretokenizer = Pretokenizer(marks)
        self.tokens = [*specials, *vocab.tokens]
        self._offset = len(specials)
        self._unk_id = self.tokens.index(UNK)
        self._segmenter = Segmenter(vocab.tokens, vocab.freqs)
        self._cache: dict[str, list[int]] = {}
        self._cache_size = cache_size

    def encode_lines(self, lines: Sequence[str], where: str = "text") -> list[list[int]]:
        """Ids of each line (no special tokens added)."""
        pretokenizer = self.pretokenizer
        cache = self._cache
        line_parts: list[list[tuple[bool, str]]] = []
        missing: dict[str, bool] = {}
        for number, line in enumerate(lines, start=1):
            pretokenizer.check(line, f"{where} line {number}")
            parts = list(pretokenizer.parts(line))
            line_parts.append(parts)
            for is_word, raw in parts:
                if raw not in cache:
                    missing[raw] = is_word
        if missing:
            self._fill(missing)
        encoded = []
        for parts in line_parts:
            ids: list[int] = []
            for _, raw in parts:
                ids += cache[raw]
            encoded.append(ids)
        return encoded

    def _fill(self, missing: dict[str, bool]) -> None:
        if len(self._cache) + len(missing) > self._cache_size:
            self._cache.clear()
        raws = list(missing)
        pretokens = [self.pretokenizer.encode_part(missing[raw], raw) for raw in raws]
        offset, unk = self._offset, self._unk_id
        for raw, pieces in zip(raws, self._segmenter.segment(pretokens), strict=True):
            self._cache[raw] = [unk if p < 0 else p + offset for p in pieces]

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``; exact for ids of text whose characters were all in training."""
        size = len(self.tokens)
        bad = [i for i in ids if not 0 <= i < size]
        if bad:
            raise TokstudyError(f"hft: id {bad[0]} is outside the vocabulary (size {size})")
        return self.decode_tokens([self.tokens[i] for i in ids])

    def decode_tokens(self, tokens: Sequence[str]) -> str:
        """Text of token strings (as :meth:`decode` of their ids)."""
        return self.pretokenizer.detokenize(
            "".join(UNK_TEXT if token == UNK else token for token in tokens)
        )
