"""From summed word maps to the segmenter vocabulary (functional + lexemic parts).

For each target word the summed cleaned maps (:mod:`.maps`) are turned into z-scores,
``z = (count - mean) / std`` with the **population** standard deviation (``ddof=0``: the
positions of one word are the whole population, not a sample of it). A position whose
z-score is **above** ``z_threshold`` (default ``0.0``: more shared than the word's average
position) counts as affix material; the sign is positive because affixes are the parts
many words share. The prefix is the leading run of such positions in the prefix-side
scores, the suffix the trailing run in the suffix-side scores (:mod:`.maps` says why the
two sides are scored apart); the rest is the stem.
A side whose counts are all equal (``std == 0``) has no affix.

Outliers removed before the vocabulary is built (choices of this implementation):

- prefixes of one character: the segmenter never starts a word with a one-character
  segment, so they cannot be used;
- affixes seen in fewer than ``min_affix_count`` targets (one-off edges are chance);
- targets whose stem, after the kept affixes are cut off, is shorter than
  ``min_stem_length`` characters.

A removed affix goes back to the stem. The vocabulary is the kept prefixes and suffixes
(*functional* parts) plus the stems (*lexemic* parts).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.tokenizers.wordmap.maps import LexemeMatrix, PositionalCounts

log = logging.getLogger(__name__)

PROGRESS_EVERY = 2000


@dataclass(frozen=True)
class AffixSplit:
    """A target cut into prefix, stem and suffix (either affix may be empty)."""

    prefix: str
    stem: str
    suffix: str


@dataclass(frozen=True)
class SegmentVocabulary:
    """The segmenter's vocabulary: functional (affixes) and lexemic (stems) parts."""

    functional: tuple[str, ...]
    lexemic: tuple[str, ...]

    @property
    def entries(self) -> frozenset[str]:
        """All segments the segmenter may use."""
        return frozenset(self.functional) | frozenset(self.lexemic)


def zscores(counts: np.ndarray) -> np.ndarray:
    """Population z-scores of positional counts; all zeros when the counts are constant."""
    counts = np.asarray(counts, dtype=np.float64)
    spread = counts.std()
    if spread == 0.0:
        return np.zeros_like(counts)
    return (counts - counts.mean()) / spread


def _run_length(flags: np.ndarray) -> int:
    not_set = np.flatnonzero(~flags)
    return int(not_set[0]) if len(not_set) else len(flags)


def split_by_zscore(target: str, counts: PositionalCounts, z_threshold: float) -> AffixSplit:
    """Cut ``target`` where its prefix/suffix z-scores stop exceeding ``z_threshold``."""
    prefix_len = _run_length(zscores(counts.prefix) > z_threshold)
    suffix_len = _run_length((zscores(counts.suffix) > z_threshold)[::-1])
    suffix_len = min(suffix_len, len(target) - prefix_len)
    stem_end = len(target) - suffix_len
    return AffixSplit(target[:prefix_len], target[prefix_len:stem_end], target[stem_end:])


def build_segment_vocabulary(
    lexemes: Sequence[str],
    z_threshold: float = 0.0,
    min_affix_count: int = 2,
    min_stem_length: int = 2,
) -> SegmentVocabulary:
    """Compare every lexeme with all others and collect affixes and stems.

    ``lexemes`` are both the targets and the words they are compared with.
    """
    targets = sorted({word.lower() for word in lexemes if word})
    if not targets:
        raise TokstudyError("Wordmap: the lexeme list is empty; no word maps can be made")
    matrix = LexemeMatrix(targets, width=max(len(word) for word in targets))
    splits = []
    for done, target in enumerate(targets, start=1):
        splits.append(split_by_zscore(target, matrix.counts(target), z_threshold))
        if done % PROGRESS_EVERY == 0:
            log.info("word maps: %d of %d targets", done, len(targets))
    return collect_vocabulary(splits, min_affix_count, min_stem_length)


def collect_vocabulary(
    splits: Sequence[AffixSplit], min_affix_count: int = 2, min_stem_length: int = 2
) -> SegmentVocabulary:
    """Remove the outliers (see the module docstring) and gather affixes and stems."""
    prefixes = Counter(split.prefix for split in splits if len(split.prefix) > 1)
    suffixes = Counter(split.suffix for split in splits if split.suffix)
    kept_prefixes = {affix for affix, n in prefixes.items() if n >= min_affix_count}
    kept_suffixes = {affix for affix, n in suffixes.items() if n >= min_affix_count}
    stems: set[str] = set()
    used_prefixes: set[str] = set()
    used_suffixes: set[str] = set()
    for split in splits:
        prefix = split.prefix if split.prefix in kept_prefixes else ""
        suffix = split.suffix if split.suffix in kept_suffixes else ""
        word = split.prefix + split.stem + split.suffix
        stem = word[len(prefix) : len(word) - len(suffix)]
        if len(stem) < min_stem_length:
            continue
        stems.add(stem)
        used_prefixes.update([prefix] if prefix else [])
        used_suffixes.update([suffix] if suffix else [])
    log.info(
        "Wordmap vocabulary: %d targets, %d prefixes, %d suffixes, %d stems",
        len(splits),
        len(used_prefixes),
        len(used_suffixes),
        len(stems),
    )
    return SegmentVocabulary(
        functional=tuple(sorted(used_prefixes | used_suffixes)), lexemic=tuple(sorted(stems))
    )
