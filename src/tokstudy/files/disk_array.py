"""Arrays on disk read with positional reads: random access to a corpus of any size in
flat memory.

A memory map (``np.memmap``) keeps every page it touches in the process's resident set,
and the kernel reads and maps up to ``read_ahead_kb`` (8 MB on the development VMs) around
each first touch: a training run that draws blocks from all over a 2.3 GB corpus held 1.1
GB of it after 13 steps of 32 blocks and all of it after 500 (docs/benchmarks.md, issue
57). A :class:`DiskArray` reads only what is indexed, with ``os.preadv`` into a fresh
array: the page cache still caches the file, but no page of it is mapped into the process.
"""

from __future__ import annotations

import operator
import os
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from tokstudy.errors import TokstudyError

#: the ``.npy`` header readers by format version
NPY_HEADER_READERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}


class DiskArray:
    """An array of ``shape`` and ``dtype`` stored row after row in ``path`` from byte
    ``offset`` on (C order), read when indexed.

    Indexing reads what it selects: an int (one row), a slice with step 1, or an integer
    array (each entry read by itself: for a few scattered rows, e.g. a bisection's probes).
    ``np.asarray(disk_array)`` reads the whole array: for small arrays only.
    """

    def __init__(self, path: Path, dtype: Any, shape: tuple[int, ...], offset: int = 0) -> None:
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(n) for n in shape)
        self.offset = int(offset)
        self.row_shape = self.shape[1:]
        self.row_bytes = int(np.prod(self.row_shape, dtype=np.int64)) * self.dtype.itemsize
        expected = self.offset + self.shape[0] * self.row_bytes
        size = self.path.stat().st_size if self.path.is_file() else -1
        if size != expected:
            raise TokstudyError(
                f"{self.path}: missing or truncated (expected {expected} bytes, found "
                f"{max(size, 0)})"
            )
        self._descriptor = os.open(self.path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._descriptor)

    @classmethod
    def of_npy(cls, path: Path) -> DiskArray:
        """The array of a ``.npy`` file (its header read, the data left on disk)."""
        with Path(path).open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version not in NPY_HEADER_READERS:
                raise TokstudyError(f"{path}: .npy format {version} (1.0 or 2.0 are read)")
            shape, fortran_order, dtype = NPY_HEADER_READERS[version](handle)
            offset = handle.tell()
        if fortran_order and len(shape) > 1:
            raise TokstudyError(f"{path}: a Fortran-ordered array cannot be read by rows")
        return cls(path, dtype, shape, offset)

    @classmethod
    def of_flat(cls, path: Path, dtype: Any) -> DiskArray:
        """The 1-D array a flat file of ``dtype`` values holds (``ndarray.tofile``)."""
        itemsize = np.dtype(dtype).itemsize
        size = Path(path).stat().st_size if Path(path).is_file() else 0
        if size % itemsize:
            raise TokstudyError(f"{path}: {size} bytes is not a whole number of {dtype} values")
        return cls(path, dtype, (size // itemsize,))

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise IndexError(f"{self.path}: a slice with step {step} (only step 1 is read)")
            return self._read(start, max(stop, start))
        if isinstance(key, int | np.integer):
            index = operator.index(key)
            position = range(len(self))[index]  # an IndexError past either end
            return self._read(position, position + 1)[0]
        indices = np.asarray(key)
        if indices.dtype.kind not in "iu":
            raise IndexError(f"{self.path}: index of type {indices.dtype} (ints or a slice)")
        rows = np.empty((*indices.shape, *self.row_shape), dtype=self.dtype)
        for place, index in np.ndenumerate(indices):
            rows[place] = self[int(index)]
        return rows

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        whole = self._read(0, len(self))
        return whole if dtype is None else whole.astype(dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.dtype, self.shape, self.offset))

    def _read(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start … stop-1`` as a fresh (writable) array."""
        rows = np.empty((stop - start, *self.row_shape), dtype=self.dtype)
        view, position = memoryview(rows.reshape(-1).view(np.uint8)), 0
        while position < len(view):
            done = os.preadv(
                self._descriptor, [view[position:]], self.offset + start * self.row_bytes + position
            )
            if done == 0:
                raise TokstudyError(f"{self.path}: ended early (truncated while being read)")
            position += done
        return rows
