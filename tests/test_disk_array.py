"""Arrays on disk read by positional reads: the same values as numpy's own indexing of the
array in memory, one-line errors for truncated files, and no page of the file mapped."""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tokstudy.errors import TokstudyError
from tokstudy.files.disk_array import DiskArray

DTYPES = st.sampled_from([np.uint16, np.int32, np.int64, np.float32])


@given(
    hnp.arrays(DTYPES, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=7)),
    st.data(),
)
def test_indexing_reads_what_numpy_indexing_gives(array, data) -> None:
    with tempfile.TemporaryDirectory() as folder:
        npy = Path(folder) / "array.npy"
        np.save(npy, array)
        flat = Path(folder) / "array.bin"
        array.tofile(flat)
        for disk in (DiskArray.of_npy(npy), DiskArray(flat, array.dtype, array.shape)):
            assert len(disk) == len(array) and disk.ndim == array.ndim
            np.testing.assert_array_equal(np.asarray(disk), array)
            start = data.draw(st.integers(-len(array) - 2, len(array) + 2))
            stop = data.draw(st.integers(-len(array) - 2, len(array) + 2) | st.none())
            np.testing.assert_array_equal(disk[start:stop], array[start:stop])
            if len(array):
                index = data.draw(st.integers(-len(array), len(array) - 1))
                np.testing.assert_array_equal(disk[index], array[index])
                indices = np.array(data.draw(st.lists(st.integers(0, len(array) - 1))), int)
                np.testing.assert_array_equal(disk[indices], array[indices])
            with pytest.raises(IndexError):
                disk[len(array)]


def test_a_read_is_a_fresh_writable_array(tmp_path) -> None:
    np.arange(10, dtype=np.int64).tofile(tmp_path / "a.bin")
    disk = DiskArray.of_flat(tmp_path / "a.bin", np.int64)
    block = disk[2:5]
    block[0] = 99  # the file is not written, and the next read sees it unchanged
    assert disk[2:5].tolist() == [2, 3, 4]
    assert pickle.loads(pickle.dumps(disk))[7:].tolist() == [7, 8, 9]


def test_truncated_and_odd_files_are_one_line_naming_the_file(tmp_path) -> None:
    path = tmp_path / "ids.bin"
    np.arange(10, dtype=np.uint16).tofile(path)
    with pytest.raises(TokstudyError, match=r"ids.bin: missing or truncated \(expected 40 bytes"):
        DiskArray(path, np.uint16, (20,))
    with pytest.raises(TokstudyError, match="missing or truncated"):
        DiskArray(tmp_path / "absent.bin", np.uint16, (1,))
    with pytest.raises(TokstudyError, match=r"ids\.bin: 20 bytes is not a whole number of"):
        DiskArray.of_flat(path, np.int64)
    with pytest.raises(IndexError, match="step 2"):
        DiskArray.of_flat(path, np.uint16)[::2]


def test_reading_maps_no_page_of_the_file(tmp_path) -> None:
    """What made a training run's memory grow with its corpus: a memory map keeps the pages
    it touched (and the read-around) mapped; positional reads map nothing."""
    path = tmp_path / "ids.bin"
    np.arange(1 << 20, dtype=np.int32).tofile(path)
    disk = DiskArray.of_flat(path, np.int32)
    starts = np.random.default_rng(0).integers(0, len(disk) - 100, 200)
    assert [int(disk[s : s + 100].sum()) for s in starts] == [100 * s + 4950 for s in starts]
    mapped = Path("/proc/self/maps").read_text()
    assert str(path) not in mapped
    memmap = np.memmap(path, dtype=np.int32, mode="r")  # the control: a map shows up
    assert int(memmap[5]) == 5 and str(path) in Path("/proc/self/maps").read_text()
