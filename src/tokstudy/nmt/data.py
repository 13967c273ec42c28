"""Parallel corpora: reading aligned files, cleaning pairs and a seeded train/dev/test split.

Input is two line-aligned files (line *i* of one translates line *i* of the other) or one
tab-separated file (``source<TAB>target`` per line); either may be gzip-compressed
(``.gz``). Only ``\\n`` ends a line, so a stray ``\\r`` cannot shift the alignment.

Cleaning works on pairs: surrounding whitespace is stripped, a pair with an empty side
is dropped whole (and counted), and with ``deduplicate`` repeated pairs keep their first
occurrence. The split output folder holds ``{train,dev,test}.{lang}`` (one sentence per
line, aligned across the two languages) and ``split.json`` with the counts. Every pass
streams the files (:class:`SplitPairs`, :class:`TsvPairs`): the split keeps one flag a pair
(deduplication sorts digests a bucket at a time, on disk), training reads its split pair
by pair.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

import numpy as np

from tokstudy.errors import TokstudyError
from tokstudy.files.lines import batched, iter_text_lines
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


@dataclass(frozen=True)
class SplitPairs:
    """The aligned pairs of two line-aligned files, read from them each time they are
    iterated: a corpus or split of any size in the memory of one pair."""

    source: Path
    target: Path

    def __iter__(self) -> Iterator[Pair]:
        sides = zip_longest(iter_text_lines(self.source), iter_text_lines(self.target))
        for source, target in sides:
            if source is None or target is None:
                counts = [
                    sum(1 for _ in iter_text_lines(path)) for path in (self.source, self.target)
                ]
                raise _line_counts_differ(self.source, self.target, *counts)
            yield source, target


@dataclass(frozen=True)
class TsvPairs:
    """The pairs of a ``source<TAB>target`` file, streamed; a line without exactly one tab
    is an error naming it."""

    path: Path

    def __iter__(self) -> Iterator[Pair]:
        for number, line in enumerate(iter_text_lines(self.path), start=1):
            fields = line.split("\t")
            if len(fields) != 2:
                raise TokstudyError(
                    f"{self.path}: line {number} has {len(fields)} tab-separated fields, expected 2"
                )
            yield fields[0], fields[1]


def raw_pairs(paths: Sequence[Path]) -> SplitPairs | TsvPairs:
    """The raw pairs of one TSV file or of two line-aligned files, streamed each time they
    are iterated."""
    if len(paths) == 1:
        return TsvPairs(Path(paths[0]))
    if len(paths) == 2:
        return SplitPairs(Path(paths[0]), Path(paths[1]))
    raise TokstudyError(f"parallel corpus: expected one TSV file or two files, got {len(paths)}")


def cleaned_pairs(pairs: Iterable[Pair], stats: PairStats) -> Iterator[Pair]:
    """Stripped pairs with no empty side; ``stats`` counts what was read and dropped."""
    for raw_source, raw_target in pairs:
        stats.pairs_read += 1
        pair = (raw_source.strip(), raw_target.strip())
        if pair[0] and pair[1]:
            yield pair
        elif not pair[0] and not pair[1]:
            stats.both_empty += 1
        elif not pair[0]:
            stats.source_only_empty += 1
        else:
            stats.target_only_empty += 1


#: digest files deduplication spreads the pairs over (by a digest's first byte): memory
#: holds one file's digests at a time
DEDUP_BUCKETS = 64
#: pairs digested before their digests go to the bucket files
DIGEST_CHUNK = 1 << 13
_DIGEST_RECORD = np.dtype([("digest", "V16"), ("position", "<i8")])


def first_occurrences(pairs: Iterable[Pair], buckets: int = DEDUP_BUCKETS) -> np.ndarray:
    """Whether each pair is the first occurrence of its (source, target), by a 128-bit
    BLAKE2b digest of both sides (length-prefixed).

    The digests and positions (24 bytes a pair) go to ``buckets`` files in a temporary
    folder (``TMPDIR``) by their first byte; each file is then read alone and its first
    occurrences marked, so memory holds one file's records and one flag a pair, whatever
    the corpus's size."""
    with tempfile.TemporaryDirectory(prefix="tokstudy-dedup-") as folder:
        paths = [Path(folder) / f"{bucket}.bin" for bucket in range(buckets)]
        with ExitStack() as stack:
            files = [stack.enter_context(path.open("wb")) for path in paths]
            total = 0
            for chunk in batched(pairs, DIGEST_CHUNK):
                digests = b"".join(map(_digest, chunk))
                records = np.empty(len(chunk), dtype=_DIGEST_RECORD)
                records["digest"] = np.frombuffer(digests, dtype="V16")
                records["position"] = np.arange(total, total + len(chunk))
                bucket_of = np.frombuffer(digests, dtype=np.uint8)[::16] % buckets
                for bucket in np.unique(bucket_of):
                    records[bucket_of == bucket].tofile(files[bucket])
                total += len(chunk)
        first = np.zeros(total, dtype=bool)
        for path in paths:
            records = np.fromfile(path, dtype=_DIGEST_RECORD)  # in position order
            first[records["position"][np.unique(records["digest"], return_index=True)[1]]] = True
    return first


def _digest(pair: Pair) -> bytes:
    """The 16-byte BLAKE2b digest of a pair (the source's length, the source, the target)."""
    source = pair[0].encode("utf-8")
    key = len(source).to_bytes(8, "little") + source + pair[1].encode("utf-8")
    return hashlib.blake2b(key, digest_size=16).digest()


def held_out_positions(total: int, dev_size: int, test_size: int, seed: int) -> tuple[set, set]:
    """The positions (of ``total`` kept pairs) of the dev and the test split: a seeded
    sample; every other position is train."""
    held = dev_size + test_size
    if held >= total:
        raise TokstudyError(
            f"nmt.split: dev_size + test_size = {held} leaves no training pairs "
            f"({total} pairs after cleaning)"
        )
    picked = random.Random(seed).sample(range(total), held)
    return set(picked[:dev_size]), set(picked[dev_size:])


def overlap(train: Iterable[Pair], test: Sequence[Pair]) -> Overlap:
    """How many test sources, targets and pairs occur in train (``train`` read once; the
    memory is the test's)."""
    wanted = [
        {source for source, _ in test},
        {target for _, target in test},
        set(test),
    ]
    found: list[set] = [set(), set(), set()]
    for pair in train:
        for side, key in enumerate((pair[0], pair[1], pair)):
            if key in wanted[side]:
                found[side].add(key)
    return Overlap(
        source=sum(source in found[0] for source, _ in test),
        target=sum(target in found[1] for _, target in test),
        pair=sum(pair in found[2] for pair in test),
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


def split_corpus(
    sources: Sequence[Path], languages: tuple[str, str], out_dir: Path, config: SplitConfig
) -> dict:
    """Clean, deduplicate and split a parallel corpus into ``out_dir``; returns the summary.

    ``sources``: one TSV file or two aligned files, in the order of ``languages``. The
    corpus is read twice (cleaned and deduplicated by digest, then written split) and the
    train split once more for its overlap with dev and test: the memory is one flag a pair
    (:func:`first_occurrences`).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs = raw_pairs(sources)
    stats = PairStats()
    if config.deduplicate:
        first = first_occurrences(cleaned_pairs(pairs, stats))
    else:
        first = np.ones(sum(1 for _ in cleaned_pairs(pairs, stats)), dtype=bool)
    stats.pairs_kept = int(first.sum())
    stats.duplicates = len(first) - stats.pairs_kept
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
    dev, test = held_out_positions(stats.pairs_kept, config.dev_size, config.test_size, config.seed)
    kept = (
        pair for pair, keep in zip(cleaned_pairs(pairs, PairStats()), first, strict=True) if keep
    )
    sizes = _write_splits(kept, dev, test, languages, out_dir)
    train = stream_split(out_dir, "train", languages)
    test_overlap = overlap(train, read_split(out_dir, "test", languages))
    dev_overlap = overlap(train, read_split(out_dir, "dev", languages))
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
        "sizes": sizes,
        "test_in_train": asdict(test_overlap),
        "dev_in_train": asdict(dev_overlap),
    }
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _write_splits(
    pairs: Iterable[Pair], dev: set, test: set, languages: tuple[str, str], out_dir: Path
) -> dict[str, int]:
    """Write each pair into its split's two files (position ``i`` of ``pairs`` is dev, test
    or train), in corpus order; return the sizes."""
    sizes = dict.fromkeys(SPLITS, 0)
    with ExitStack() as stack:
        files = {
            (name, side): stack.enter_context(
                split_file(out_dir, name, language).open("w", encoding="utf-8", newline="\n")
            )
            for name in SPLITS
            for side, language in enumerate(languages)
        }
        for position, pair in enumerate(pairs):
            name = "dev" if position in dev else "test" if position in test else "train"
            sizes[name] += 1
            for side in (0, 1):
                files[name, side].write(pair[side] + "\n")
    return sizes


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
