"""BPE-knockout (Bauwens & Delobelle, 2024, "BPE-knockout: Pruning Pre-existing BPE
Tokenisers with Backwards-compatible Morphological Semi-supervision") on HF ``tokenizers``
BPE.

The algorithm: tokenise a lexicon of word types whose morph boundaries are known with the
BPE merges, applied in rank order; every application of a merge either joins two pieces
across a morph boundary (it *disagrees* with the morphology) or inside a morph. A merge
that disagrees in at least ``threshold`` (0.5 in the paper) of its applications, weighted
by word frequency, is knocked out: the merge and the token it made leave the tokenizer.

Where this differs from the paper, and why:

- **The reference.** The paper uses gold segmentations (CELEX, e-Lex) for English, Dutch
  and German; none is in ``../shared`` and most study languages have none. The morph
  boundaries are those of a Morfessor Baseline model trained on the corpus's own word types
  (unsupervised; the ``morfessor`` package), so knockout removes merges that cut across
  Morfessor's morphs. The boundary after the word mark ``▁`` is not counted.
- **Merges that used a knocked-out token.** The paper rewrites them as merges of three or
  more pieces; HF ``tokenizers`` BPE models hold pairs only, so they are knocked out too
  (a cascade), and so are merges that used theirs.
- **The size.** BPE is trained ``margin`` larger than the size; after the knockout the
  surviving merges are kept in order until the size is reached. A merge's statistics do
  not depend on later merges (BPE applies them in rank order), so the statistics of the
  kept merges are those of a BPE of any size that holds them. Where the survivors do not
  reach the size, the margin doubles (three tries), then the size policy applies.

The bundled ``bpe-knockout`` package is not used: it needs ``tktkt[all]`` and
``modest_bauwenst`` (about 35 further packages, among them ``datasets``, ``gensim``,
``pyarrow`` and browser drivers) and downloads its morphological data sets.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models

from tokstudy.tokenizers.adapters.hf_tokenizers import HFBPE, HFTokenizersAdapter
from tokstudy.tokenizers.adapters.morfessor import Morfessor, train_baseline, word_counts
from tokstudy.tokenizers.base import UNK, TrainSpec, enforce_size_policy
from tokstudy.tokenizers.params import Param
from tokstudy.tokenizers.word_marks import METASPACE

log = logging.getLogger(__name__)

Merge = tuple[str, str]
MARGIN_TRIES = 3


def merge_applications(word: str, ranks: Mapping[Merge, int]) -> Iterable[tuple[int, int]]:
    """``(merge rank, character offset of its right piece)`` of every merge BPE applies to
    ``word`` (its characters as the first pieces), in order."""
    pieces = list(word)
    while len(pieces) > 1:
        found = [rank for pair in pairwise(pieces) if (rank := ranks.get(pair)) is not None]
        if not found:
            return
        rank = min(found)
        merged, offset, i = [], 0, 0
        while i < len(pieces):
            if i + 1 < len(pieces) and ranks.get((pieces[i], pieces[i + 1])) == rank:
                yield rank, offset + len(pieces[i])
                merged.append(pieces[i] + pieces[i + 1])
                offset += len(merged[-1])
                i += 2
            else:
                merged.append(pieces[i])
                offset += len(pieces[i])
                i += 1
        pieces = merged


def knocked_out(
    merges: Sequence[Merge],
    lexicon: Mapping[str, tuple[int, frozenset[int]]],
    threshold: float,
) -> set[int]:
    """Ranks of the merges that disagree with the morph boundaries in at least
    ``threshold`` of their applications to the lexicon (``word → (count, boundaries)``,
    a boundary being the character offset a morph starts at)."""
    ranks = {merge: rank for rank, merge in enumerate(merges)}
    applied: Counter[int] = Counter()
    disagreeing: Counter[int] = Counter()
    for word, (count, boundaries) in sorted(lexicon.items()):
        for rank, offset in merge_applications(word, ranks):
            applied[rank] += count
            disagreeing[rank] += count * (offset in boundaries)
    return {rank for rank in applied if disagreeing[rank] >= threshold * applied[rank]}


def surviving_merges(merges: Sequence[Merge], knocked: set[int]) -> list[Merge]:
    """The merges left after the knockout and its cascade: a merge whose piece is a token
    that no surviving merge makes (and that is not a character) goes too."""
    made = {a + b for a, b in merges}
    removed: set[str] = set()
    kept = []
    for rank, (a, b) in enumerate(merges):
        if rank in knocked or a in removed or b in removed:
            if a + b in made:
                removed.add(a + b)
            continue
        kept.append((a, b))
        removed.discard(a + b)
    return kept


def morph_lexicon(
    counts: Mapping[str, int], seed: int, params: Mapping[str, object]
) -> dict[str, tuple[int, frozenset[int]]]:
    """Each ``▁word`` with its count and Morfessor's morph boundaries (offsets after the
    first morph, the one after the mark ``▁`` left out)."""
    model = train_baseline(counts, seed, params, None)
    lexicon = {}
    for word, count in counts.items():
        morphs, _ = model.viterbi_segment(word)
        offsets, position = set(), 0
        for morph in morphs[:-1]:
            position += len(morph)
            offsets.add(position)
        lexicon[word] = (count, frozenset(offsets - {len(METASPACE)}))
    return lexicon


class BPEKnockout(HFTokenizersAdapter):
    """BPE with the merges that cut across Morfessor's morphs knocked out."""

    name = "bpe_knockout"
    lossless = True
    params_spec: ClassVar[dict] = {
        "threshold": Param((int, float), 0.5, minimum=0.0, maximum=1.0),
        "margin": Param((int, float), 0.25, minimum=0.0),
        "count_modifier": Morfessor.params_spec["count_modifier"],
        "min_count": Morfessor.params_spec["min_count"],
        "finish_threshold": Morfessor.params_spec["finish_threshold"],
        "max_epochs": Morfessor.params_spec["max_epochs"],
    }

    @classmethod
    def fit(cls, corpus: Path, spec: TrainSpec) -> HFTokenizersAdapter:
        assert spec.vocab_size is not None
        params = spec.params
        counts = Counter(
            {unicodedata.normalize("NFKC", w): n for w, n in word_counts(corpus).items()}
        )
        lexicon: dict[str, tuple[int, frozenset[int]]] | None = None
        margin = float(params["margin"])
        bpe_params = {"pre_tokenizer": "metaspace"}
        for _ in range(MARGIN_TRIES):
            larger = spec.vocab_size + max(1, round(margin * spec.vocab_size))
            bpe = HFBPE.fit(
                corpus, replace(spec, vocab_size=larger, params=bpe_params, size_policy="adjust")
            )
            model = json.loads(bpe._tokenizer.to_str())["model"]
            merges = [tuple(merge) for merge in model["merges"]]
            made = {a + b for a, b in merges}
            base = [token for token, _ in sorted(model["vocab"].items(), key=lambda t: t[1])]
            base = [token for token in base if token not in made]
            if len(base) >= spec.vocab_size:  # below the alphabet: no merge to keep
                knocked: set[int] = set()
                kept: list[Merge] = []
                break
            if lexicon is None:
                lexicon = morph_lexicon(counts, spec.seed, params)
            knocked = knocked_out(merges, lexicon, float(params["threshold"]))
            kept = surviving_merges(merges, knocked)[: max(0, spec.vocab_size - len(base))]
            if len(base) + len(kept) >= spec.vocab_size or len(bpe.vocab) < larger:
                break
            margin *= 2
        log.info(
            "bpe_knockout (%s): %d of %d merges knocked out, %d with the cascade",
            spec.label,
            len(knocked),
            len(merges),
            len(merges) - len(surviving_merges(merges, knocked)),
        )
        tokenizer = HFTokenizer.from_str(bpe._tokenizer.to_str())
        vocab = {token: i for i, token in enumerate([*base, *(a + b for a, b in kept)])}
        tokenizer.model = models.BPE(vocab=vocab, merges=kept, unk_token=UNK)
        enforce_size_policy(cls.name, spec, len(vocab), f" ({len(knocked)} merges knocked out)")
        return cls(tokenizer)
