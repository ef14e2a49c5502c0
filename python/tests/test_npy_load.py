# SPDX-License-Identifier: Apache-2.0
"""stguard.npy.load / load_npz against np.load: every dtype stguard accepts, .npy versions
1.0, 2.0 and 3.0, C and Fortran order, stored and deflated members; zero-copy where the
data is aligned, writable copy-on-write; SafetensorError for what check refuses."""
import io
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npformat

import stguard.npy
from stguard import SafetensorError

DTYPES = ["<f2", "<f4", ">f4", "<f8", ">f8", "|i1", "<i2", ">i2", "<i4", "<i8", ">i8",
          "|u1", "<u2", ">u4", "<u8", "|b1", "<c8", ">c8", "<c16", "<U5", "|S4",
          "<M8[s]", "<m8[ms]", "<M8", "<m8", "|V4", "<f16", "<c32"]


def sample(dtype, shape):
    count = int(np.prod(shape))
    kind = np.dtype(dtype).kind
    if kind in "US":
        return np.array(["k%d" % i for i in range(count)]).astype(dtype).reshape(shape)
    if kind in "Mm":
        return np.arange(count, dtype="int64").astype(dtype).reshape(shape)
    if kind == "V":
        raw = bytes(i % 251 for i in range(count * np.dtype(dtype).itemsize))
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    return (np.arange(count) % 7 - 2).astype(dtype).reshape(shape)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("fortran", [False, True])
def test_npy_loads_as_numpy(tmp_path, dtype, version, fortran):
    array = sample(dtype, (3, 4))
    if fortran:
        array = np.asfortranarray(array)
    path = tmp_path / "a.npy"
    with open(path, "wb") as f:
        npformat.write_array(f, array, version=version)
    got = stguard.npy.load(path)
    assert same(got, np.load(path))
    assert same(got, np.load(path, mmap_mode="r"))


@pytest.mark.parametrize("writer", [np.savez, np.savez_compressed])
def test_npz_loads_as_numpy(tmp_path, writer):
    arrays = {"a%d" % i: sample(d, (2, 3)) for i, d in enumerate(DTYPES)}
    arrays["f"] = np.asfortranarray(sample(">f8", (4, 5)))
    arrays["scalar"] = np.array(2.5)
    path = tmp_path / "a.npz"
    writer(path, **arrays)
    got = stguard.npy.load_npz(path)
    with np.load(path) as reference:
        assert list(got) == reference.files and list(got) == [k for k in arrays]
        for key in reference.files:
            assert same(got[key], reference[key]), key


def test_npy_is_zero_copy_and_copy_on_write(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(16, dtype="<f4"))
    array = stguard.npy.load(path)
    assert not array.flags.owndata and array.flags.writeable and array.flags.aligned
    array[0] = 99
    assert np.load(path)[0] == 0  # the file never changes


def test_stored_npz_member_is_zero_copy(tmp_path):
    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(16, dtype="<f8"))
    array = stguard.npy.load_npz(path)["x"]
    assert isinstance(array.base, (memoryview, np.ndarray, object))
    assert not array.flags.owndata and array.flags.writeable
    array[1] = 5
    assert np.load(path)["x"][1] == 1


def npy_bytes(array, **kwargs):
    buffer = io.BytesIO()
    npformat.write_array(buffer, array, **kwargs)
    return buffer.getvalue()


def test_refused_files_raise(tmp_path):
    path = tmp_path / "o.npy"
    np.save(path, np.array([1, None], dtype=object), allow_pickle=True)
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load(path)
    assert error.value.code == "NpyObjectArray"
    path.write_bytes(npy_bytes(np.arange(3.0)) + b"\0")  # trailing byte: numpy ignores it
    with pytest.raises(SafetensorError):
        stguard.npy.load(path)
    archive = tmp_path / "t.npz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../x.npy", npy_bytes(np.arange(3.0)))
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load_npz(archive)
    assert error.value.code == "NpzMemberName"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_LZMA) as zf:
        zf.writestr("x.npy", npy_bytes(np.arange(3.0)))
    with pytest.raises(SafetensorError):
        stguard.npy.load_npz(archive)


def test_deflated_member_checksum_is_checked_when_inflated(tmp_path):
    # load_npz inflates each deflated member once, after a header-only parse: the CRC-32
    # and the stream's end are checked on that one pass, before any array is returned.
    archive = tmp_path / "c.npz"
    np.savez_compressed(archive, a=np.arange(100.0), b=np.arange(50.0))
    assert list(stguard.npy.load_npz(archive)) == ["a", "b"]
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo("b.npy")
    crc = info.CRC.to_bytes(4, "little")
    wrong = (info.CRC ^ 1).to_bytes(4, "little")
    assert data.count(crc) == 2  # the local header and the central directory
    archive.write_bytes(bytes(data).replace(crc, wrong))
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load_npz(archive)
    assert error.value.code == "ZipChecksum"


def test_npz_names_and_keys_as_numpy_reads_them(tmp_path):
    a, b = np.arange(3, dtype="<f4"), np.arange(4, dtype="<i8")
    path = tmp_path / "k.npz"
    # No array at all, a non-ASCII key (zipfile flags it UTF-8), a key ending in ".npy".
    for arrays in ({}, {"\u00e9": a}, {"x.npy": b}, {"x": a, "x.npy.npy": b}):
        np.savez(path, **arrays)
        got = stguard.npy.load_npz(path)
        with np.load(path) as reference:
            assert list(got) == reference.files
            for key in reference.files:
                assert same(got[key], reference[key]), key
    # x.npy and x.npy.npy: numpy's keys x and x.npy both give A (the raw name first).
    np.savez(path, x=a, **{"x.npy": b})
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load_npz(path)
    assert error.value.code == "ZipDuplicateName"
    # A member named without ".npy" keeps its own reason beside x.npy.
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x", npy_bytes(a))
        zf.writestr("x.npy", npy_bytes(a))
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load_npz(path)
    assert error.value.code == "NpzMemberName"


def test_npz_unflagged_non_ascii_name_raises_stguards_error(tmp_path):
    """zipfile reads an unflagged 0x82 as cp437 "\u00e9": refused with a SafetensorError,
    never a bare UnicodeDecodeError."""
    with zipfile.ZipFile(tmp_path / "q.npz", "w") as zf:
        zf.writestr("Q.npy", npy_bytes(np.arange(3.0)))
    raw = (tmp_path / "q.npz").read_bytes().replace(b"Q.npy", b"\x82.npy")
    (tmp_path / "q.npz").write_bytes(raw)
    with np.load(tmp_path / "q.npz") as reference:
        assert reference.files == ["\u00e9"]
    with pytest.raises(SafetensorError) as error:
        stguard.npy.load_npz(tmp_path / "q.npz")
    assert error.value.code == "NpzMemberName"


def test_npy_of_more_than_32_dimensions_raises(tmp_path):
    path = tmp_path / "d.npy"
    for ndim, accepted in ((32, True), (33, False)):
        with open(path, "wb") as f:
            npformat.write_array_header_1_0(
                f, {"descr": "<f4", "fortran_order": False, "shape": (1,) * ndim})
            f.write(b"\0" * 4)
        if accepted:
            assert same(stguard.npy.load(path), np.load(path))
            continue
        if np.lib.NumpyVersion(np.__version__) < "2.0.0":  # numpy 2 allows 64
            with pytest.raises(ValueError):
                np.load(path)
        with pytest.raises(SafetensorError) as error:
            stguard.npy.load(path)
        assert error.value.code == "NpyHeaderKeys"
