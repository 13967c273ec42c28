"""Which words Wordmap segments, and its lexeme list: the Hanover Tagger (HanTa).

HanTa (Wartena, 2019; PyPI ``hanta``) ships its German model ``morphmodel_ger.pgz``.
Tags are written the STTS way: HanTa's ``VV(FIN)`` is ``VVFIN`` here.

Tagging is done per **word type**, without sentence context: the tag of a word is HanTa's
most probable analysis of the word alone (``HanoverTagger.analyze``, case-sensitive, so a
capitalised ``Verstehen`` is the noun). A word therefore always gets the same segments,
whatever sentence it is in, which is what lets the pre-segmentation be cached per type and
applied identically at training and at encoding time. Only alphabetic words of at least two
characters are tagged; numbers, punctuation and mixed tokens are never segmented.

The lexeme list is derived from the training corpus: the lower-cased word types tagged
with one of the selected tags, plus their HanTa lemmas, ranked by corpus frequency (a lemma
counts the occurrences of its forms) and cut to the ``max_lexemes`` most frequent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from importlib.metadata import version
from typing import Any

from tokstudy.errors import TokstudyError

HANTA_MODEL = "morphmodel_ger.pgz"
#: full verbs: finite, imperative, infinitive, infinitive with "zu", past participle
DEFAULT_POS_TAGS: tuple[str, ...] = ("VVFIN", "VVIMP", "VVINF", "VVIZU", "VVPP")
INTERNAL_TAGS = frozenset({"EMPTY", "END", "UNKNOWN", "END_UNKNOWN"})


def hanta_version() -> str:
    """Version of the installed HanTa package (its model decides the tags)."""
    return version("HanTa")


@cache
def load_hanta() -> Any:
    """The German HanTa tagger (loaded once per process)."""
    from HanTa import HanoverTagger

    return HanoverTagger.HanoverTagger(HANTA_MODEL)


def stts(hanta_tag: str) -> str:
    """HanTa's tag in STTS spelling: ``VV(FIN)`` → ``VVFIN``."""
    return hanta_tag.replace("(", "").replace(")", "")


def known_tags() -> frozenset[str]:
    """Every tag the German model can assign, in STTS spelling."""
    tags = (t for t in load_hanta().tag2int if isinstance(t, str))
    return frozenset(stts(t) for t in tags if t not in INTERNAL_TAGS and not t.startswith("END_"))


class HanTaFlagger:
    """Tags word types with HanTa and says which ones the segmenter should split."""

    def __init__(self, pos_tags: Iterable[str] = DEFAULT_POS_TAGS) -> None:
        self.pos_tags = tuple(sorted(set(pos_tags)))
        if not self.pos_tags:
            raise TokstudyError("Wordmap parameter pos_tags: the list of tags is empty")
        unknown = sorted(set(self.pos_tags) - known_tags())
        if unknown:
            raise TokstudyError(
                f"Wordmap parameter pos_tags: {', '.join(unknown)} not tags of the HanTa "
                f"German model (STTS spelling, e.g. {', '.join(DEFAULT_POS_TAGS)})"
            )
        self._cache: dict[str, tuple[str, str] | None] = {}

    def analyze(self, word: str) -> tuple[str, str] | None:
        """``(lemma, STTS tag)`` of a word type, or ``None`` for words that are not tagged."""
        if word not in self._cache:
            if len(word) < 2 or not word.isalpha():
                self._cache[word] = None
            else:
                lemma, tag = load_hanta().analyze(word)
                self._cache[word] = (lemma, stts(tag))
        return self._cache[word]

    def flags(self, word: str) -> bool:
        """Whether ``word`` has one of the selected tags."""
        analysis = self.analyze(word)
        return analysis is not None and analysis[1] in self.pos_tags

    def __getstate__(self) -> dict[str, Any]:
        return {"pos_tags": self.pos_tags}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self.pos_tags = tuple(state["pos_tags"])
        self._cache = {}


def lexeme_list(
    word_counts: Mapping[str, int], flagger: HanTaFlagger, max_lexemes: int
) -> list[str]:
    """Flagged word types and their lemmas, lower-cased, most frequent ``max_lexemes``."""
    frequency: Counter[str] = Counter()
    for word, count in word_counts.items():
        analysis = flagger.analyze(word)
        if analysis is None or analysis[1] not in flagger.pos_tags:
            continue
        lemma = analysis[0]
        frequency[word.lower()] += count
        if lemma.isalpha() and lemma.lower() != word.lower():
            frequency[lemma.lower()] += count
    ranked = sorted(frequency.items(), key=lambda item: (-item[1], item[0]))
    return sorted(word for word, _ in ranked[:max_lexemes])
