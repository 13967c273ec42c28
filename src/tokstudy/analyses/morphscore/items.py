"""MorphScore-style items from UD treebanks, and their scores for one tokenizer.

**An item** (after MorphScore, Arnett & Bergen 2024, whose data give a word, ``pt1`` (the
stem) and ``rest``): a word type ``(form, lemma)`` of a treebank, not part of a multiword
token, whose UPOS is not ``PUNCT``, ``SYM``, ``NUM`` or ``X``, whose lemma is not ``_``,
and whose form *starts with its lemma* and is longer: the lemma is the stem, and the
boundary of interest lies after it (``dogs``/``dog`` → ``dog|s``; ``보좌관은``/``보좌관`` →
``보좌관|은``). Form and lemma are compared NFC-normalised, whitespace removed, character
by character lower-cased (so a capitalised sentence-initial form still matches its lemma;
offsets stay those of the form). A lemma's compound markers are removed first
(:data:`tokstudy.analyses.morphology.alignment.COMPOUND_MARKERS`: Finnish ``aamu#pala`` →
``aamupala``, so ``aamupalaa`` is the item ``aamupala|a``); such items are counted in
``Items.compounds``. Words whose lemma is not a prefix of the form (``went``/``go``,
``gingen``/``gehen``, infinitive lemmas of verbs) give no item: they are counted as
``not_prefix``.

**The score** (MorphScore's rule): an item scores 1 when one of the tokenizer's boundaries
inside the word is the boundary of interest, 0 otherwise; an item the tokenizer keeps
whole (one token) is *excluded*, as is one whose tokens cannot be mapped back onto the
word (``unmappable``: an unknown token, or a decoder that does not give the word back).
MorphScore is the mean over the scored items (types, each once). The word is tokenized in
one of two encodings (:mod:`tokstudy.analyses.morphology.spans`): after a space, as in
running text (``in_context``), or alone (``alone``, as MorphScore's code does).

**Beside it**, for the same encoding:

* ``morphscore_chance``: the expected MorphScore of random cuts, the same number of cuts
  in each scored word (:mod:`tokstudy.analyses.morphology.chance`): the mean over the
  scored items of ``k / (n - 1)``, exact;
* ``morphscore_corrected``: ``(morphscore - chance) / (1 - chance)``, 0 at chance (empty
  where chance is 1: a tokenizer that cuts every position, such as ``char``);
* ``precision``: the share of the tokenizer's cuts inside the scored words that are at the
  boundary of interest (hits over all cuts: a tokenizer that cuts everywhere has many cuts
  and one hit per word), and ``precision_chance``, the same for random cuts (the sum of
  ``k / (n - 1)`` over the sum of ``k``);
* ``morphscore_single_token_as_0``: the hits over the scored items *and* the words kept
  whole (which count 0 instead of being excluded).

**Markers**: token strings are never compared. A word's boundaries come from the
tokenizer's own decoder (:func:`tokstudy.analyses.morphology.spans.token_boundaries`):
the first ``k`` ids are decoded for every ``k``, so the ``▁`` of SentencePiece, the ``Ġ``
byte symbol of byte-level BPE and the ``##`` of WordPiece are removed by the decoder that
put them there; whitespace is then removed and the text NFC-normalised. (MorphScore's own
code decodes each token alone and compares the concatenation with ``pt1``, so a WordPiece
``##s`` never matches.)

**All morpheme boundaries**: where a treebank's MISC column segments a word into morphemes
(``MSeg=보좌관-은``, Korean PUD), every boundary between its morphemes counts, for every
word with at least two morphemes that join to the form: boundary precision is the share
of the tokenizer's boundaries inside such words that are morpheme boundaries, recall the
share of morpheme boundaries that are token boundaries (both micro-averaged over types).
Treebanks without ``MSeg`` have no such columns (empty).
"""

from __future__ import annotations

import csv
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tokstudy.analyses.morphology.alignment import (
    EXCLUDED_UPOS,
    common_prefix_length,
    lemma_without_markers,
)
from tokstudy.analyses.morphology.chance import above_chance, cut_chance
from tokstudy.analyses.morphology.spans import comparable_form, token_boundaries
from tokstudy.corpora.ud import iter_conllu
from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.base import Tokenizer

log = logging.getLogger(__name__)

#: the morpheme separator of UD's ``MSeg`` MISC attribute
MSEG_SEPARATOR = "-"


@dataclass
class Items:
    """The items of one language: ``(form, lemma)`` → stem boundary, the morpheme
    boundaries of forms segmented in MISC, why other words gave no item, the words with a
    lemma and the items whose lemma marked a compound."""

    stems: dict[tuple[str, str], int] = field(default_factory=dict)
    morphemes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    lemmas: int = 0
    compounds: set[tuple[str, str]] = field(default_factory=set)


def stem_item(form: str, lemma: str) -> int | None:
    """The boundary of interest in ``form`` (the length of the lemma without compound
    markers) when the form starts with that lemma and is longer, else ``None``."""
    form, lemma = comparable_form(form), comparable_form(lemma_without_markers(lemma))
    if 0 < len(lemma) < len(form) and common_prefix_length(form, lemma) == len(lemma):
        return len(lemma)
    return None


def mseg_boundaries(form: str, mseg: str | None) -> tuple[int, ...] | None:
    """Offsets between the morphemes of ``MSeg`` when they join to the form, else ``None``."""
    if not mseg:
        return None
    parts = [comparable_form(p) for p in mseg.split(MSEG_SEPARATOR)]
    if len(parts) < 2 or not all(parts) or "".join(parts) != comparable_form(form):
        return None
    offsets, total = [], 0
    for part in parts[:-1]:
        total += len(part)
        offsets.append(total)
    return tuple(offsets)


def build_items(paths: Iterable[Path]) -> Items:
    """The items of the CoNLL-U files of one language (see the module docstring)."""
    items = Items()
    for path in paths:
        for sentence in iter_conllu(path):
            covered = {
                i
                for t in sentence
                if isinstance(t["id"], tuple) and t["id"][1] == "-"
                for i in range(t["id"][0], t["id"][2] + 1)
            }
            for token in sentence:
                if not isinstance(token["id"], int) or token["id"] in covered:
                    continue
                _add_word(
                    items,
                    token["form"],
                    token["lemma"] or "_",
                    token["upos"] or "_",
                    (token["misc"] or {}).get("MSeg"),
                )
    return items


def morphscore_items(path: Path) -> Items:
    """The items of one of MorphScore's own data files (``<language>_morph_data.csv``,
    columns ``full_word``, ``pt1``, ``rest``): the boundary lies after ``pt1``. Rows whose
    ``pt1 + rest`` is not the word, or with an empty part, give no item and are counted
    as ``parts do not join to the word``; a repeated row counts once (items are types)
    and is counted as ``duplicate row``."""
    items = Items()
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    missing = {"full_word", "pt1", "rest"} - set(rows[0] if rows else {})
    if missing:
        raise TokstudyError(f"{path}: no column {', '.join(sorted(missing))} (a MorphScore file?)")
    for row in rows:
        form, stem = comparable_form(row["full_word"]), comparable_form(row["pt1"])
        rest = comparable_form(row["rest"])
        if not stem or not rest or stem + rest != form:
            items.skipped["parts do not join to the word"] += 1
            continue
        if (form, stem) in items.stems:
            items.skipped["duplicate row"] += 1
            continue
        items.lemmas += 1
        items.stems[(form, stem)] = len(stem)
    return items


def _add_word(items: Items, form: str, lemma: str, upos: str, mseg: str | None) -> None:
    if lemma != "_":
        items.lemmas += 1
    boundaries = mseg_boundaries(form, mseg)
    if boundaries:
        items.morphemes[comparable_form(form)] = boundaries
    stem = comparable_form(lemma_without_markers(lemma))
    if upos in EXCLUDED_UPOS or lemma == "_":
        items.skipped["punctuation, symbol, number, X or no lemma"] += 1
    elif comparable_form(form).lower() == stem.lower():
        items.skipped["form equals lemma"] += 1
    elif (boundary := stem_item(form, lemma)) is None:
        items.skipped["not_prefix"] += 1
    else:
        key = (comparable_form(form), stem)
        items.stems[key] = boundary
        if stem != comparable_form(lemma):
            items.compounds.add(key)


def score(items: Items, tokenizer: Tokenizer, encoding: str) -> dict[str, float | int]:
    """MorphScore, its chance level, precision and counts for one tokenizer in one
    encoding (module docstring), and boundary precision/recall where the items have
    morpheme segmentations (``nan`` otherwise)."""
    cache: dict[str, tuple[int, ...] | None] = {}

    def cuts(form: str) -> tuple[int, ...] | None:
        if form not in cache:
            cache[form] = token_boundaries(tokenizer, form, encoding)
        return cache[form]

    hits = single = unmappable = cut_count = 0
    expected_hits = 0.0
    for (form, _lemma), boundary in sorted(items.stems.items()):
        found = cuts(form)
        if found is None:
            unmappable += 1
        elif not found:
            single += 1
        else:
            hits += boundary in found
            cut_count += len(found)
            expected_hits += cut_chance(len(form), len(found))
    scored = len(items.stems) - single - unmappable
    true = proposed = gold = 0
    for form, boundaries in sorted(items.morphemes.items()):
        found = cuts(form)
        if found is None:
            continue
        true += len(set(found) & set(boundaries))
        proposed += len(found)
        gold += len(boundaries)
    nan = float("nan")
    morphscore = hits / scored if scored else nan
    chance = expected_hits / scored if scored else nan
    return {
        "items": len(items.stems),
        "scored": scored,
        "excluded_single_token": single,
        "excluded_unmappable": unmappable,
        "morphscore": morphscore,
        "morphscore_chance": chance,
        "morphscore_corrected": above_chance(morphscore, chance),
        "precision": hits / cut_count if cut_count else nan,
        "precision_chance": expected_hits / cut_count if cut_count else nan,
        "morphscore_single_token_as_0": hits / (scored + single) if scored + single else nan,
        "segmented_words": len(items.morphemes),
        "boundary_precision": true / proposed if proposed else nan,
        "boundary_recall": true / gold if gold else nan,
    }
