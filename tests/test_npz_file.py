"""ddpg.checkpoint.npz_file: the archive np.load reads, and a failed write that leaves no
half-open archive behind (np.savez's ZipFile would complain later, from the garbage
collector, after the run's own message)."""
import errno
import gc
import struct
import sys
import zipfile

import numpy as np
import pytest

from ddpg.checkpoint import npz_file


def test_np_load_reads_back_every_array_exactly(tmp_path):
    arrays = {"obss": np.arange(12, dtype=np.float32).reshape(3, 4),
              "ends": np.array([True, False, True]),
              "top": np.int64(7), "empty": np.zeros((0, 2))}
    path = str(tmp_path / "a.npz")
    npz_file.write_npz(path, arrays)
    with np.load(path, allow_pickle=False) as loaded:
        assert sorted(loaded.files) == sorted(arrays)
        for name, value in arrays.items():
            assert loaded[name].dtype == np.asarray(value).dtype
            assert loaded[name].shape == np.shape(value)
            np.testing.assert_array_equal(loaded[name], value)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == sorted(name + ".npy" for name in arrays)
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


def test_members_have_zip64_headers_so_they_may_exceed_2_gib(tmp_path):
    path = str(tmp_path / "a.npz")
    npz_file.write_npz(path, {"a": np.ones(3)})
    with open(path, "rb") as handle:
        header = struct.unpack("<4s5H3I2H", handle.read(30))
        handle.read(header[9])  # the member's name
        extra = handle.read(header[10])
    assert header[0] == b"PK\x03\x04"
    # the local header carries a ZIP64 extra field (id 1) with the 8-byte sizes; Python 3.11+
    # also writes 0xFFFFFFFF into the 4-byte fields, 3.10 only past 4 GiB
    fields, offset = {}, 0
    while offset + 4 <= len(extra):
        field_id, size = struct.unpack_from("<2H", extra, offset)
        fields[field_id] = extra[offset + 4:offset + 4 + size]
        offset += 4 + size
    assert 1 in fields and len(fields[1]) >= 16
    if sys.version_info >= (3, 11):
        assert header[7:9] == (0xFFFFFFFF, 0xFFFFFFFF)


def test_objects_are_refused(tmp_path):
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npz_file.write_npz(str(tmp_path / "a.npz"), {"x": np.array([{}], dtype=object)})


def test_a_failed_write_raises_once_and_leaves_nothing_open(tmp_path, monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    real_write_array = np.lib.format.write_array
    written = []

    def write_then_fail(member, array, **options):
        if written:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(array)
        real_write_array(member, array, **options)

    monkeypatch.setattr(np.lib.format, "write_array", write_then_fail)
    with pytest.raises(OSError, match="No space left on device"):
        npz_file.write_npz(str(tmp_path / "a.npz"), {"a": np.ones(3), "b": np.ones(3)})
    gc.collect()
    assert unraisable == []
    assert len(written) == 1
