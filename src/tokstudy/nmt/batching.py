"""Model inputs of a translation pair and batches bounded by a token budget.

A source is ``ids + [SEP]``; the decoder reads ``[CLS] + ids`` and predicts ``ids + [SEP]``
(``[CLS]`` is the beginning-of-sentence and ``[SEP]`` the end-of-sentence token). Batches
follow the usual recipe: examples sorted by length (ties in a seeded random order) are cut
into batches whose padded size ``sentences × longest side`` stays within the budget (the
longest side rounded up to the padding multiple, when there is one), and the batches are
shuffled with a seed.

A corpus of more than :data:`BATCH_WINDOW` pairs is batched a window at a time
(:func:`window_batches`): each window gathers blocks of consecutive pairs in a seeded order,
sorts and cuts them as above and shuffles its batches, so the batch order held in memory is
that of one window, whatever the corpus.

The training pairs are encoded a chunk at a time into flat id files in a folder
(:class:`EncodedPairs`, read where they lie): what stays in memory is the window's lengths
and batch order, not the text, a Python object or an offset per pair of the corpus.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch

from tokstudy.errors import TokstudyError
from tokstudy.files.disk_array import DiskArray
from tokstudy.nmt.config import round_up
from tokstudy.tokenizers.base import CLS, PAD, SEP, SPECIAL_TOKENS, Tokenizer

log = logging.getLogger(__name__)

#: label value the loss ignores (target padding)
IGNORE_INDEX = -100
#: pairs encoded at a time (:func:`encode_pairs`)
ENCODE_PAIRS = 4096
#: a corpus of up to this many pairs is batched as a whole; a larger one a window of this many
#: pairs at a time (:func:`window_batches`)
BATCH_WINDOW = 1 << 20
#: consecutive pairs that go into a window together (blocks join windows in a seeded order)
WINDOW_BLOCK = 1 << 10


@dataclass(frozen=True)
class SpecialIds:
    """Control-token ids of a tokenizer: padding, sentence start and end, never-generated."""

    pad: int
    bos: int
    eos: int
    #: control tokens other than the end of sentence: never part of a hypothesis
    suppressed: tuple[int, ...]

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> SpecialIds:
        """The ids of ``[PAD]``, ``[CLS]`` (start) and ``[SEP]`` (end) in ``tokenizer.vocab``."""
        index = {token: i for i, token in enumerate(tokenizer.vocab) if token in SPECIAL_TOKENS}
        missing = [token for token in (PAD, CLS, SEP) if token not in index]
        if missing:
            raise TokstudyError(
                f"tokenizer {tokenizer.name!r}: no {', '.join(missing)} in its vocabulary "
                "(NMT needs [PAD], [CLS] as sentence start and [SEP] as sentence end)"
            )
        suppressed = tuple(sorted(i for i in tokenizer.special_ids if i != index[SEP]))
        return cls(index[PAD], index[CLS], index[SEP], suppressed)


def shared_special_ids(source: Tokenizer, target: Tokenizer) -> SpecialIds:
    """The target's special ids, checked to be the same ids in the source tokenizer."""
    source_ids, target_ids = SpecialIds.of(source), SpecialIds.of(target)
    fields = ("pad", "bos", "eos")
    if any(getattr(source_ids, name) != getattr(target_ids, name) for name in fields):
        raise TokstudyError(
            f"tokenizers {source.name!r} and {target.name!r} give [PAD]/[CLS]/[SEP] different "
            f"ids ({source_ids.pad}/{source_ids.bos}/{source_ids.eos} vs "
            f"{target_ids.pad}/{target_ids.bos}/{target_ids.eos}); the model shares them"
        )
    return target_ids


@dataclass(frozen=True, slots=True)
class EncodedPair:
    """One encoded pair: source ids (with end token) and target ids (without specials),
    each a sequence of ints (views into :class:`EncodedPairs`'s id files)."""

    index: int
    source: Sequence[int]
    target: Sequence[int]

    @property
    def length(self) -> int:
        """Longer side in model positions (target counts its start/end token)."""
        return max(len(self.source), len(self.target) + 1)


#: the files of an :class:`EncodedPairs` folder: every side's ids one after another, each
#: pair's first id in them (and the end of the last), and each pair's position in the input
ID_FILES = {"source": "source.ids", "target": "target.ids"}
START_FILES = {"source": "source.starts", "target": "target.starts"}
INDEX_FILE = "pairs.index"
ID_DTYPE, START_DTYPE = np.dtype(np.int32), np.dtype(np.int64)


class EncodedPairs(Sequence[EncodedPair]):
    """Encoded training pairs in the files :func:`encode_pairs` wrote in ``folder``:
    ``pairs[i]`` is an :class:`EncodedPair` whose ids are read from the files when asked
    (:class:`~tokstudy.files.disk_array.DiskArray`: none of them becomes part of the process's
    memory, as a memory map's touched pages would). With ``owned``, the folder is removed
    when the pairs are."""

    def __init__(self, folder: Path, owned: bool = False) -> None:
        self.folder = Path(folder)
        self.ids = {
            side: DiskArray.of_flat(self.folder / name, ID_DTYPE) for side, name in ID_FILES.items()
        }
        self.starts = {
            side: DiskArray.of_flat(self.folder / name, START_DTYPE)
            for side, name in START_FILES.items()
        }
        self.indices = DiskArray.of_flat(self.folder / INDEX_FILE, START_DTYPE)
        if owned:
            weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, position):  # type: ignore[override]
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        position = range(len(self))[position]  # an IndexError past either end
        source, target = (self._ids(side, position) for side in ID_FILES)
        return EncodedPair(int(self.indices[position]), source, target)

    def _ids(self, side: str, position: int) -> np.ndarray:
        start, end = self.starts[side][position : position + 2].tolist()
        return self.ids[side][start:end]

    def lengths(self, start: int = 0, end: int | None = None) -> np.ndarray:
        """The :attr:`EncodedPair.length` of pairs ``start`` to ``end`` (by default all)."""
        end = len(self) if end is None else end
        source, target = (np.diff(self.starts[side][start : end + 1]) for side in ID_FILES)
        return np.maximum(source, target + 1)

    def target_ids(self, chunk: int = 1 << 20) -> Iterator[np.ndarray]:
        """The target ids, ``chunk`` at a time (read, not mapped)."""
        with (self.folder / ID_FILES["target"]).open("rb") as handle:
            while len(ids := np.fromfile(handle, dtype=ID_DTYPE, count=chunk)):
                yield ids


def _append(ids: list[list[int]], end: int, id_file: BinaryIO, start_file: BinaryIO) -> int:
    """Append sequences of ids to an id file and their end positions to a start file;
    return the new end."""
    lengths = np.array([len(one) for one in ids], dtype=START_DTYPE)
    total = int(lengths.sum())
    np.fromiter((i for one in ids for i in one), dtype=ID_DTYPE, count=total).tofile(id_file)
    (end + np.cumsum(lengths)).astype(START_DTYPE).tofile(start_file)
    return end + total


def encode_pairs(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    pairs: Iterable[tuple[str, str]],
    special: SpecialIds,
    max_length: int,
    folder: Path | None = None,
) -> EncodedPairs:
    """Training examples of ``pairs`` written into ``folder`` (by default a temporary one,
    in ``TMPDIR``, removed with the returned pairs); pairs with a side over ``max_length``
    are left out.

    Encoded :data:`ENCODE_PAIRS` pairs at a time and appended to the id files: neither the
    text nor a library's per-line encoding objects pile up for the whole corpus."""
    owned = folder is None
    folder = Path(tempfile.mkdtemp(prefix="tokstudy-nmt-pairs-")) if owned else Path(folder)
    try:
        _write_encoded(source_tokenizer, target_tokenizer, pairs, special, max_length, folder)
    except BaseException:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return EncodedPairs(folder, owned)


def _write_encoded(
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    pairs: Iterable[tuple[str, str]],
    special: SpecialIds,
    max_length: int,
    folder: Path,
) -> None:
    """The id, start and index files of :func:`encode_pairs`."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [*ID_FILES.values(), *START_FILES.values(), INDEX_FILE]
    files = {name: (folder / name).open("wb") for name in names}
    ends = {"source": 0, "target": 0}
    read = kept = 0
    try:
        for side in ID_FILES:
            np.zeros(1, dtype=START_DTYPE).tofile(files[START_FILES[side]])
        iterator = iter(pairs)
        while chunk := list(islice(iterator, ENCODE_PAIRS)):
            sides = {
                "source": [
                    [*ids, special.eos]
                    for ids in source_tokenizer.encode_batch([source for source, _ in chunk])
                ],
                "target": target_tokenizer.encode_batch([target for _, target in chunk]),
            }
            fitting = [
                offset
                for offset, (source, target) in enumerate(zip(*sides.values(), strict=True))
                if max(len(source), len(target) + 1) <= max_length
            ]
            (np.array(fitting, dtype=START_DTYPE) + read).tofile(files[INDEX_FILE])
            for side, encoded in sides.items():
                ids = [encoded[offset] for offset in fitting]
                ends[side] = _append(
                    ids, ends[side], files[ID_FILES[side]], files[START_FILES[side]]
                )
            read, kept = read + len(chunk), kept + len(fitting)
    finally:
        for handle in files.values():
            handle.close()
    if kept < read:
        log.info("left out %d of %d pairs longer than %d tokens", read - kept, read, max_length)
    if not kept:
        raise TokstudyError(f"no training pair fits in max_length={max_length} tokens")


def token_batches(
    lengths: Sequence[int] | np.ndarray, max_tokens: int, seed: int | Sequence[int]
) -> list[np.ndarray]:
    """Batches of positions into ``lengths`` with ``len(batch) × max length <= max_tokens``.

    Every position is in exactly one batch; equal lengths are ordered at random and the
    batch order is shuffled, both with ``seed``. Each batch is a view into one array of
    positions (8 bytes a pair, whatever the corpus).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if not len(lengths):
        return []
    if lengths.max() > max_tokens:
        raise TokstudyError(
            f"an example of {lengths.max()} tokens does not fit in max_tokens={max_tokens}"
        )
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(lengths))
    order = shuffled[np.argsort(lengths[shuffled], kind="stable")]
    # sorted ascending, a batch's longest example is its last: cut where one more would
    # overflow the budget
    bounds, count = [0], 0
    for end, length in enumerate(lengths[order].tolist()):
        if count and (count + 1) * length > max_tokens:
            bounds.append(end)
            count = 0
        count += 1
    bounds.append(len(order))
    batches = [order[start:end] for start, end in itertools.pairwise(bounds)]
    return [batches[i] for i in rng.permutation(len(batches))]


def example_lengths(examples: Sequence[EncodedPair], start: int, end: int) -> np.ndarray:
    """The :attr:`EncodedPair.length` of ``examples[start:end]`` (read from the length files of
    :class:`EncodedPairs`, without reading the ids)."""
    if isinstance(examples, EncodedPairs):
        return examples.lengths(start, end)
    return np.array([example.length for example in examples[start:end]], dtype=np.int64)


def window_batches(
    examples: Sequence[EncodedPair],
    max_tokens: int,
    seed: Sequence[int],
    multiple: int = 1,
    window: int = BATCH_WINDOW,
    block: int = WINDOW_BLOCK,
) -> Iterator[np.ndarray]:
    """One epoch's batches of positions into ``examples``: :func:`token_batches` of their
    lengths rounded up to ``multiple``.

    Up to ``window`` examples are batched as a whole with ``seed``. More are batched a
    window at a time: blocks of ``block`` consecutive examples are taken in an order drawn
    with ``seed``, ``window // block`` blocks a window, and each window is batched with
    ``(*seed, its number)``; memory holds one window's lengths and batches.
    """
    count = len(examples)
    if count <= window:
        lengths = example_lengths(examples, 0, count)
        yield from token_batches(round_up(lengths, multiple), max_tokens, seed)
        return
    blocks = -(-count // block)
    block_starts = np.random.default_rng(seed).permutation(blocks) * block
    per_window = max(window // block, 1)
    for number, first in enumerate(range(0, blocks, per_window)):
        starts = block_starts[first : first + per_window].tolist()
        spans = [(start, min(start + block, count)) for start in starts]
        positions = np.concatenate([np.arange(start, end) for start, end in spans])
        lengths = np.concatenate([example_lengths(examples, start, end) for start, end in spans])
        for batch in token_batches(round_up(lengths, multiple), max_tokens, (*seed, number)):
            yield positions[batch]


def pad(
    sequences: Sequence[Sequence[int]], value: int, multiple: int = 1, width: int | None = None
) -> torch.Tensor:
    """A ``(batch, width)`` tensor of ``sequences``, right-padded with ``value``: ``width``
    (when not given) is the longest sequence's length rounded up to a multiple of
    ``multiple``."""
    if width is None:
        width = round_up(max(len(sequence) for sequence in sequences), multiple)
    return torch.tensor([list(seq) + [value] * (width - len(seq)) for seq in sequences])


def collate(
    examples: Sequence[EncodedPair],
    special: SpecialIds,
    multiple: int = 1,
    budget: int | None = None,
) -> dict[str, torch.Tensor]:
    """Model inputs of a batch: source ids and mask, decoder inputs and labels; each side
    padded to a multiple of ``multiple`` positions (few distinct shapes for compiled
    kernels; the padding is masked and ignored by the loss).

    ``budget``: a fixed shape (for CUDA graphs): both sides one width, the longest side's
    rounded up to ``multiple``, and ``budget // width`` rows, those past the examples
    filled with a source of one end token and no target (no label: no loss)."""
    sources = [example.source for example in examples]
    targets = [[special.bos, *example.target] for example in examples]
    labels = [[*example.target, special.eos] for example in examples]
    width = None
    if budget is not None:
        width = round_up(max(example.length for example in examples), multiple)
        rows = budget // width
        if rows < len(examples):
            raise ValueError(f"{len(examples)} examples do not fit in {rows} rows")
        filler = rows - len(examples)
        sources, targets = sources + [[special.eos]] * filler, targets + [[special.bos]] * filler
        labels += [[]] * filler
    return {
        "input_ids": pad(sources, special.pad, multiple, width),
        "attention_mask": pad([[1] * len(source) for source in sources], 0, multiple, width),
        "decoder_input_ids": pad(targets, special.pad, multiple, width),
        "labels": pad(labels, IGNORE_INDEX, multiple, width),
    }
