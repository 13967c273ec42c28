"""Parallel corpora: reading aligned files, cleaning pairs and a seeded train/dev/test split.

Input is two line-aligned files (line *i* of one translates line *i* of the other) or one
tab-separated file (``source<TAB>target`` per line); either may be gzip-compressed
(``.gz``). Only ``\\n`` ends a line, so a stray ``\\r`` cannot shift the alignment.

Cleaning works on pairs: surrounding whitespace is stripped, a pair with an empty side
is dropped whole (and counted), and with ``deduplicate`` repeated pairs keep their first
occurrence. The split output folder holds ``{train,dev,test}.{lang}`` (one sentence per
line, aligned across the two languages) and ``split.json`` with the counts. Training reads
its split through :class:`SplitPairs`, streamed from the two files, never all in memory.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

from tokstudy.corpus_io import count_lines, iter_text_lines, read_text_lines
from tokstudy.errors import TokstudyError
from tokstudy.nmt.config import SplitConfig

log = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
SUMMARY_FILE = "split.json"

Pair = tuple[str, str]


@dataclass
class PairStats:
    """What cleaning did to a parallel corpus."""

    pairs_read: int = 0
    both_empty: int = 0
    source_only_empty: int = 0
    target_only_empty: int = 0
    duplicates: int = 0
    pairs_kept: int = 0


@dataclass(frozen=True)
class Overlap:
    """Test items that also occur in train (reported, not removed)."""

    source: int
    target: int
    pair: int


def _line_counts_differ(source: Path, target: Path, sources: int, targets: int) -> TokstudyError:
    return TokstudyError(
        f"parallel files differ in line count: {source} has {sources} lines, {target} has {targets}"
    )


def read_parallel(source: Path, target: Path) -> list[Pair]:
    """Raw pairs of two line-aligned files; different line counts raise TokstudyError."""
    sources, targets = read_text_lines(source), read_text_lines(target)
    if len(sources) != len(targets):
        raise _line_counts_differ(source, target, len(sources), len(targets))
    return list(zip(sources, targets, strict=True))


@dataclass(frozen=True)
class SplitPairs:
    """The aligned pairs of two line-aligned files, read from them each time they are
    iterated: a split of any size in the memory of one pair."""

    source: Path
    target: Path

    def __iter__(self) -> Iterator[Pair]:
        sides = zip_longest(iter_text_lines(self.source), iter_text_lines(self.target))
        for source, target in sides:
            if source is None or target is None:
                raise _line_counts_differ(
                    self.source, self.target, count_lines(self.source), count_lines(self.target)
                )
            yield source, target


def read_tsv(path: Path) -> list[Pair]:
    """Raw pairs of a ``source<TAB>target`` file; a line without exactly one tab is an error."""
    pairs = []
    for number, line in enumerate(read_text_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise TokstudyError(
                f"{path}: line {number} has {len(fields)} tab-separated fields, expected 2"
            )
        pairs.append((fields[0], fields[1]))
    return pairs


def read_pairs(paths: Sequence[Path]) -> list[Pair]:
    """Raw pairs of one TSV file or of two line-aligned files."""
    if len(paths) == 1:
        return read_tsv(Path(paths[0]))
    if len(paths) == 2:
        return read_parallel(Path(paths[0]), Path(paths[1]))
    raise TokstudyError(f"parallel corpus: expected one TSV file or two files, got {len(paths)}")


def clean_pairs(pairs: Sequence[Pair], deduplicate: bool = True) -> tuple[list[Pair], PairStats]:
    """Stripped pairs with no empty side, first occurrences only when ``deduplicate``."""
    stats = PairStats(pairs_read=len(pairs))
    seen: set[Pair] = set()
    kept = []
    for raw_source, raw_target in pairs:
        pair = (raw_source.strip(), raw_target.strip())
        if not pair[0] or not pair[1]:
            if not pair[0] and not pair[1]:
                stats.both_empty += 1
            elif not pair[0]:
                stats.source_only_empty += 1
            else:
                stats.target_only_empty += 1
            continue
        if deduplicate:
            if pair in seen:
                stats.duplicates += 1
                continue
            seen.add(pair)
        kept.append(pair)
    stats.pairs_kept = len(kept)
    return kept, stats


def split_pairs(
    pairs: Sequence[Pair], dev_size: int, test_size: int, seed: int
) -> dict[str, list[Pair]]:
    """``{"train", "dev", "test"}`` → pairs; a seeded sample of positions, corpus order kept."""
    held = dev_size + test_size
    if held >= len(pairs):
        raise TokstudyError(
            f"nmt.split: dev_size + test_size = {held} leaves no training pairs "
            f"({len(pairs)} pairs after cleaning)"
        )
    picked = random.Random(seed).sample(range(len(pairs)), held)
    dev, test = set(picked[:dev_size]), set(picked[dev_size:])
    splits: dict[str, list[Pair]] = {name: [] for name in SPLITS}
    for index, pair in enumerate(pairs):
        name = "dev" if index in dev else "test" if index in test else "train"
        splits[name].append(pair)
    return splits


def overlap(train: Sequence[Pair], test: Sequence[Pair]) -> Overlap:
    """How many test sources, targets and pairs occur in train."""
    sources = {source for source, _ in train}
    targets = {target for _, target in train}
    pairs = set(train)
    return Overlap(
        source=sum(source in sources for source, _ in test),
        target=sum(target in targets for _, target in test),
        pair=sum(pair in pairs for pair in test),
    )


def split_file(directory: Path, split: str, language: str) -> Path:
    """Path of one side of one split in a split folder."""
    return Path(directory) / f"{split}.{language}"


def read_split(directory: Path, split: str, languages: tuple[str, str]) -> list[Pair]:
    """The aligned pairs of one split written by :func:`split_corpus`."""
    return list(stream_split(directory, split, languages))


def stream_split(directory: Path, split: str, languages: tuple[str, str]) -> SplitPairs:
    """The pairs of one split written by :func:`split_corpus`, streamed (:class:`SplitPairs`)."""
    return SplitPairs(
        split_file(directory, split, languages[0]), split_file(directory, split, languages[1])
    )


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line + "\n")


def split_corpus(
    sources: Sequence[Path], languages: tuple[str, str], out_dir: Path, config: SplitConfig
) -> dict:
    """Clean, deduplicate and split a parallel corpus into ``out_dir``; returns the summary.

    ``sources``: one TSV file or two aligned files, in the order of ``languages``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs, stats = clean_pairs(read_pairs(sources), config.deduplicate)
    log.info(
        "%s: %d pairs read; dropped %d with both sides empty, %d with only the %s side "
        "empty, %d with only the %s side empty, %d duplicates; %d kept",
        "-".join(languages),
        stats.pairs_read,
        stats.both_empty,
        stats.source_only_empty,
        languages[0],
        stats.target_only_empty,
        languages[1],
        stats.duplicates,
        stats.pairs_kept,
    )
    splits = split_pairs(pairs, config.dev_size, config.test_size, config.seed)
    for name, split_pairs_ in splits.items():
        for side, language in enumerate(languages):
            _write_lines(split_file(out_dir, name, language), (pair[side] for pair in split_pairs_))
    test_overlap = overlap(splits["train"], splits["test"])
    dev_overlap = overlap(splits["train"], splits["dev"])
    log.info(
        "test sentences also in train: %d %s, %d %s, %d pairs (reported, not removed)",
        test_overlap.source,
        languages[0],
        test_overlap.target,
        languages[1],
        test_overlap.pair,
    )
    summary = {
        "sources": [str(path) for path in sources],
        "languages": list(languages),
        "config": asdict(config),
        "cleaning": asdict(stats),
        "sizes": {name: len(split_pairs_) for name, split_pairs_ in splits.items()},
        "test_in_train": asdict(test_overlap),
        "dev_in_train": asdict(dev_overlap),
    }
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def parse_direction(direction: str) -> tuple[str, str]:
    """``"en-mr"`` → ``("en", "mr")``."""
    parts = direction.split("-")
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise TokstudyError(f"direction {direction!r}: expected 'src-tgt', e.g. 'en-mr'")
    return parts[0], parts[1]


def joint_training_text(split_dir: Path, languages: tuple[str, str], out_path: Path) -> Path:
    """Both sides of the split's train pairs in one file (the first language's lines, then
    the second's, streamed): the text of a joint tokenizer."""
    with Path(out_path).open("w", encoding="utf-8", newline="\n") as handle:
        for language in languages:
            for line in iter_text_lines(split_file(split_dir, "train", language)):
                handle.write(line + "\n")
    return Path(out_path)
