"""Do token boundaries fall at the stem/inflection boundary? (UD lemmas as reference)

A word is *inflected* when its form differs from its lemma. Comparison is per character
with ``str.lower`` on both sides, so sentence-initial capitals compare as expected and
offsets stay those of the form (``casefold`` would turn ``ß`` into two characters). The
stem/inflection boundary is the end of the longest common prefix of form and lemma:
``gingen``/``gehen`` → 1 (``g|ingen``), ``Kinder``/``Kind`` → 4.

Only words where that boundary lies strictly inside the form are analysed. Left out, and
logged: forms equal to their lemma, forms sharing no first character with the lemma
(suppletion: ``ist``/``sein``), forms that are a prefix of their lemma (nothing follows the
stem: ``geh``/``gehen``), punctuation, symbols, numbers, ``X`` and ``_`` lemmas, and
multiword tokens. A word counts as aligned when one of the tokenizer's boundaries inside
the word (:func:`tokstudy.analyses.morphology.spans.token_boundaries`, the word tokenized
after a space or alone: its ``encoding``) is at the stem boundary; a word kept whole is
not aligned.

**Chance.** Beside each share, the share that random cuts would align
(:mod:`tokstudy.analyses.morphology.chance`): each word cut at random as often as the
tokenizer cuts it, the expected share is the mean of ``k / (n - 1)`` (``k`` cuts, ``n``
characters; 0 for a word kept whole), and the share above chance is
``(share - chance) / (1 - chance)``.

**Compound markers.** A lemma may mark the parts of a compound with a character the form
does not have: Finnish TDT and PUD write ``aamu#pala`` for ``aamupalaa``
(:data:`COMPOUND_MARKERS`). The markers are removed from the lemma before it is compared
(:func:`lemma_without_markers`), so the stem boundary is ``aamupala|a``, not ``aamu|palaa``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from tokstudy.analyses.morphology.chance import above_chance, cut_chance
from tokstudy.analyses.morphology.spans import comparable_form, token_boundaries
from tokstudy.corpora.ud import iter_ud_words
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

log = logging.getLogger(__name__)

EXCLUDED_UPOS = frozenset({"PUNCT", "SYM", "NUM", "X"})
#: characters a treebank's lemmas put between the parts of a compound, which its forms
#: never contain: ``#`` (Finnish TDT and PUD: ``aamu#pala`` for ``aamupalaa``)
COMPOUND_MARKERS = ("#",)
COLUMNS = (
    "form",
    "lemma",
    "upos",
    "count",
    "stem_boundary",
    "token_boundaries",
    "mappable",
    "aligned",
    "chance",
)


def common_prefix_length(form: str, lemma: str) -> int:
    """Length of the longest common prefix, comparing characters lower-cased."""
    length = 0
    for a, b in zip(form, lemma, strict=False):
        if a.lower() != b.lower():
            break
        length += 1
    return length


def lemma_without_markers(lemma: str) -> str:
    """The lemma with the compound markers (:data:`COMPOUND_MARKERS`) removed."""
    for marker in COMPOUND_MARKERS:
        lemma = lemma.replace(marker, "")
    return lemma


def stem_boundary(form: str, lemma: str) -> int | None:
    """Offset in the form where the inflection starts, or ``None`` when not analysable."""
    form, lemma = comparable_form(form), comparable_form(lemma_without_markers(lemma))
    if form.lower() == lemma.lower():
        return None
    boundary = common_prefix_length(form, lemma)
    return boundary if 0 < boundary < len(form) else None


def morphological_alignment(
    conllu_paths: Iterable[Path], tokenizer: Tokenizer, encoding: str
) -> pd.DataFrame:
    """One row per analysable inflected (form, lemma, UPOS) type with its boundaries, the
    words tokenized in ``encoding`` (:data:`tokstudy.analyses.morphology.spans.ENCODINGS`).

    Columns: ``form, lemma, upos, count, stem_boundary, token_boundaries`` (offsets
    joined by spaces), ``mappable`` (the tokens could be mapped onto the word),
    ``aligned`` (a token boundary at the stem boundary; ``False`` when not mappable) and
    ``chance`` (the probability that random cuts, as many as the tokenizer's, hit the stem
    boundary; empty when not mappable).
    """
    paths = list(conllu_paths)
    if not paths:
        raise TokstudyError("morphological alignment: no CoNLL-U files given")
    types: Counter[tuple[str, str, str]] = Counter()
    skipped: Counter[str] = Counter()
    for word in iter_ud_words(paths):
        if word.upos in EXCLUDED_UPOS or word.lemma == "_":
            skipped["punctuation, symbol, number, X or no lemma"] += 1
        elif (
            comparable_form(word.form).lower()
            == comparable_form(lemma_without_markers(word.lemma)).lower()
        ):
            skipped["form equals lemma"] += 1
        elif stem_boundary(word.form, word.lemma) is None:
            skipped["no stem boundary inside the form"] += 1
        else:
            types[(word.form, word.lemma, word.upos)] += 1
    log.info(
        "%s: %d inflected tokens analysed; left out: %s",
        ", ".join(Path(p).name for p in paths),
        sum(types.values()),
        ", ".join(f"{why} {n}" for why, n in sorted(skipped.items())) or "none",
    )
    boundaries_of: dict[str, tuple[int, ...] | None] = {}
    rows = []
    for (form, lemma, upos), count in sorted(types.items()):
        if form not in boundaries_of:
            boundaries_of[form] = token_boundaries(tokenizer, form, encoding)
        found = boundaries_of[form]
        boundary = stem_boundary(form, lemma)
        rows.append(
            {
                "form": form,
                "lemma": lemma,
                "upos": upos,
                "count": count,
                "stem_boundary": boundary,
                "token_boundaries": "" if found is None else " ".join(map(str, found)),
                "mappable": found is not None,
                "aligned": found is not None and boundary in found,
                "chance": None
                if found is None
                else cut_chance(len(comparable_form(form)), len(found)),
            }
        )
    unmappable = sum(1 for found in boundaries_of.values() if found is None)
    if unmappable:
        log.info(
            "%d of %d forms could not be mapped onto their tokens", unmappable, len(boundaries_of)
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def alignment_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Shares of aligned words among the mappable ones, by type and by token, each with
    its chance level and the share above chance (one row)."""
    mappable = table[table["mappable"]]
    weights = mappable["count"]
    tokens = weights.sum()
    nan = float("nan")
    share_types = mappable["aligned"].mean() if len(mappable) else nan
    chance_types = mappable["chance"].astype(float).mean() if len(mappable) else nan
    share_tokens = (mappable["aligned"] * weights).sum() / tokens if tokens else nan
    chance_tokens = (mappable["chance"].astype(float) * weights).sum() / tokens if tokens else nan
    return pd.DataFrame(
        [
            {
                "types": len(table),
                "tokens": int(table["count"].sum()),
                "unmappable_types": int((~table["mappable"]).sum()),
                "aligned_share_types": share_types,
                "chance_types": chance_types,
                "corrected_types": above_chance(share_types, chance_types),
                "aligned_share_tokens": share_tokens,
                "chance_tokens": chance_tokens,
                "corrected_tokens": above_chance(share_tokens, chance_tokens),
            }
        ]
    )
