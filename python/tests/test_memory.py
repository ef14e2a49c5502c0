# SPDX-License-Identifier: Apache-2.0
"""The memory model: lazy zero-copy views over a private copy-on-write mapping that lives
as long as any array uses it, aligned copies for misaligned tensors, the GIL released
while validating and writing."""

import gc
import hashlib
import json
import struct
import threading
import time

import numpy as np
import pytest

import stguard
import stguard.numpy as snp
from stguard import _core
from conftest import drop_cached_pages, is_mapped, mapped_rss, raw_file


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_writing_into_arrays_never_changes_the_file(tmp_path):
    path = tmp_path / "cow.safetensors"
    snp.save_file({"a": np.arange(1024, dtype=np.float32), "b": np.zeros(16, np.int64)}, path)
    before = digest(path)
    loaded = snp.load_file(path)
    assert loaded["a"].flags.writeable and not loaded["a"].flags.owndata
    loaded["a"][:] = -1.0
    loaded["b"] += 7
    with stguard.safe_open(path, "np") as f:
        view = f.get_tensor("a")
        view[3] = 99.0
        assert f.get_tensor("a")[3] == 99.0  # one mapping: the handle sees its own write
    assert digest(path) == before
    np.testing.assert_array_equal(snp.load_file(path)["a"], np.arange(1024, dtype=np.float32))


def test_writing_into_torch_tensors_never_changes_the_file(tmp_path):
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    path = tmp_path / "cow.safetensors"
    st.save_file({"w": torch.ones(64, 64, dtype=torch.bfloat16)}, path)
    before = digest(path)
    weight = st.load_file(path)["w"]
    weight.mul_(3)
    weight[0, 0] = 42
    assert weight[0, 0].item() == 42
    assert digest(path) == before
    assert torch.equal(st.load_file(path)["w"], torch.ones(64, 64, dtype=torch.bfloat16))


def test_arrays_outlive_the_handle(tmp_path):
    path = tmp_path / "life.safetensors"
    expected = np.arange(4096, dtype=np.float64).reshape(64, 64)
    snp.save_file({"x": expected}, path)
    f = stguard.safe_open(path, "np")
    array = f.get_tensor("x")
    part = f.get_slice("x")
    del f
    gc.collect()
    assert is_mapped(path)  # the array keeps the mapping
    np.testing.assert_array_equal(array, expected)
    np.testing.assert_array_equal(part[3:5, ::7], expected[3:5, ::7])
    closed = stguard.safe_open(path, "np")
    early = closed.get_tensor("x")
    closed.close()
    gc.collect()
    assert float(early.sum()) == float(expected.sum())
    loaded = snp.load_file(path)["x"]
    gc.collect()
    np.testing.assert_array_equal(loaded, expected)
    # ... and no longer: once the last array goes, the mapping goes.
    del array, part, early, loaded, closed
    gc.collect()
    assert not is_mapped(path)


def test_torch_tensors_outlive_the_handle(tmp_path):
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    path = tmp_path / "life.safetensors"
    st.save_file({"w": torch.arange(100, dtype=torch.int32)}, path)
    with stguard.safe_open(path, "pt") as f:
        tensor = f.get_tensor("w")
    del f
    gc.collect()
    assert int(tensor.sum()) == sum(range(100))
    del tensor
    gc.collect()
    assert not is_mapped(path)


def misaligned_file() -> bytes:
    # U8 "b" (1 byte) first, then F32 "a" at data offset 1; N = 96 keeps 8 + N aligned, so
    # "a" starts at an odd absolute offset: valid, but not aligned for 4-byte floats.
    values = np.array([1.5, -2.25, 3e38, 0.0, 7.0], dtype="<f4")
    header = ('{"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
              '"a":{"dtype":"F32","shape":[5],"data_offsets":[1,21]}}')
    header += " " * (-len(header) % 8)
    return raw_file(header, b"\x09" + values.tobytes()), values


def test_misaligned_tensor_comes_back_aligned_and_correct(tmp_path):
    data, values = misaligned_file()
    path = tmp_path / "misaligned.safetensors"
    path.write_bytes(data)
    (length,) = struct.unpack("<Q", data[:8])
    assert (8 + length + 1) % 4 != 0
    for loaded in (snp.load_file(path), snp.load(data)):
        assert loaded["a"].flags.aligned
        assert loaded["a"].ctypes.data % 4 == 0
        np.testing.assert_array_equal(loaded["a"], values)
        assert loaded["b"].tolist() == [9]
    with stguard.safe_open(path, "np") as f:
        np.testing.assert_array_equal(f.get_slice("a")[1::2], values[1::2])
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    tensor = st.load_file(path)["a"]
    assert tensor.data_ptr() % 4 == 0
    assert tensor.tolist() == values.tolist()


def sparse_checkpoint(path, num_tensors, tensor_bytes):
    """Writes a checkpoint whose data is a hole: big on paper, nothing on disk."""
    header = {f"t{i:05d}": {"dtype": "F32", "shape": [tensor_bytes // 4],
                            "data_offsets": [i * tensor_bytes, (i + 1) * tensor_bytes]}
              for i in range(num_tensors)}
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text.encode())
        out.truncate(8 + len(text) + num_tensors * tensor_bytes)


def test_opening_and_taking_every_tensor_reads_no_data_pages(tmp_path):
    path = tmp_path / "big.safetensors"
    sparse_checkpoint(path, 64, 16 << 20)  # 1 GiB
    drop_cached_pages(path)
    with stguard.safe_open(path, "np") as f:
        arrays = [f.get_tensor(name) for name in f.keys()]
        assert sum(a.nbytes for a in arrays) == 1 << 30
        assert mapped_rss(path) < (1 << 20)  # the header page(s) and little more
        part = f.get_slice("t00003")[5:10]  # reads one page
        assert part.tolist() == [0.0] * 5
        assert mapped_rss(path) < (1 << 20)
        arrays[7][::1024].sum()  # touches every page of one 16 MiB tensor
        assert mapped_rss(path) >= 15 << 20


def test_get_slice_reads_only_the_pages_it_needs(tmp_path):
    path = tmp_path / "rows.safetensors"
    rows = np.arange(4096 * 1024, dtype=np.float32).reshape(4096, 1024)  # one page per row
    snp.save_file({"m": rows}, path)
    drop_cached_pages(path)
    with stguard.safe_open(path, "np") as f:
        part = f.get_slice("m")
        np.testing.assert_array_equal(part[4000, 10:20], rows[4000, 10:20])
        np.testing.assert_array_equal(part[::1024, -3:], rows[::1024, -3:])
        assert mapped_rss(path) < (1 << 20)
        np.testing.assert_array_equal(part[:, 0], rows[:, 0])  # a column: every page
        assert mapped_rss(path) >= 15 << 20


def progress_during(call):
    """Runs call() while another thread counts; returns (seconds taken, how many counts
    happened in the middle 60% of the call)."""
    stamps = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            for _ in range(200):
                pass
            stamps.append(time.perf_counter())

    worker = threading.Thread(target=count)
    worker.start()
    time.sleep(0.05)
    start = time.perf_counter()
    call()
    end = time.perf_counter()
    stop.set()
    worker.join()
    margin = (end - start) * 0.2
    return end - start, sum(1 for t in stamps if start + margin < t < end - margin)


def long_header_file(path, num_tensors):
    # Zero-size tensors all at offset 0: a big header with no data, slow to validate.
    entry = '"%07d":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}'
    text = "{" + ",".join(entry % i for i in range(num_tensors)) + "}"
    path.write_bytes(struct.pack("<Q", len(text)) + text.encode())


def test_gil_is_released_while_validating(tmp_path):
    path = tmp_path / "long.safetensors"
    long_header_file(path, 600_000)
    seconds, progress = progress_during(lambda: _core.Storage.open(str(path)))
    assert seconds > 0.05, "validation too quick to tell"
    assert progress > 0
    seconds, progress = progress_during(lambda: stguard.check(path))
    assert seconds > 0.05 and progress > 0


def test_gil_is_released_while_writing(tmp_path):
    big = np.ones(96 << 20, dtype=np.uint8)
    path = tmp_path / "written.safetensors"
    seconds, progress = progress_during(lambda: snp.save_file({"x": big}, path))
    assert seconds > 0.05 and progress > 0
    seconds, progress = progress_during(lambda: snp.save({"x": big}))
    assert seconds > 0.02 and progress > 0
