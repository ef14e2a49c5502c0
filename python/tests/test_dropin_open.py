# SPDX-License-Identifier: Apache-2.0
"""safe_open as a drop-in: backends, get_tensors, framework spellings, closed handles,
_safe_open_handle, and the reference's exception types for missing files."""

import gc
import io
import os
import sys
import types

import numpy as np
import pytest

import stguard
import stguard.numpy as snp
from conftest import is_mapped, raw_file

TENSORS = {"a": np.arange(12, dtype=np.float32).reshape(3, 4),
           "b": np.array([7, 8, 9], dtype=np.int64), "c": np.zeros((0, 2), np.uint8)}


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "m.safetensors"
    snp.save_file(TENSORS, file, metadata={"format": "np"})
    return file


def torch_or_skip():
    return pytest.importorskip("torch", reason="torch is not installed: torch cases skipped")


def assert_same(got, expected):
    np.testing.assert_array_equal(np.asarray(got), expected)
    assert np.asarray(got).dtype == expected.dtype


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_backends_give_the_same_tensors_numpy(path, backend):
    with stguard.safe_open(path, "np", backend=backend) as f:
        everything = f.get_tensors()
        assert list(everything) == f.offset_keys()
        for name, expected in TENSORS.items():
            assert_same(everything[name], expected)
            assert_same(f.get_tensor(name), expected)
        assert f.get_slice("a")[1:3, ::2].tolist() == [[4.0, 6.0], [8.0, 10.0]]
        assert f.metadata() == {"format": "np"}
    loaded = snp.load_file(path, backend=backend)
    for name, expected in TENSORS.items():
        assert_same(loaded[name], expected)


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_backends_give_the_same_tensors_torch(path, backend):
    torch = torch_or_skip()
    import stguard.torch as storch
    loaded = storch.load_file(path, backend=backend)
    assert isinstance(loaded["a"], torch.Tensor) and list(loaded) == ["b", "a", "c"]
    for name, expected in TENSORS.items():
        np.testing.assert_array_equal(loaded[name].numpy(), expected)
    with stguard.safe_open(path, "pt", backend=backend) as f:
        assert f.get_slice("a")[:, 1].tolist() == [1.0, 5.0, 9.0]


def test_pread_reads_fresh_buffers_and_maps_nothing(path):
    with stguard.safe_open(path, "np", backend="pread") as f:
        first = f.get_tensor("a")
        second = f.get_tensor("a")
        assert not is_mapped(path)
        first[0, 0] = 100.0  # each read is its own buffer
        assert second[0, 0] == 0.0 and f.get_tensor("a")[0, 0] == 0.0
    with stguard.safe_open(path, "np") as f:  # the accept side: mmap maps
        held = f.get_tensor("a")
        assert is_mapped(path)
    del held


def test_pread_turns_a_truncated_file_into_an_io_error(path):
    with stguard.safe_open(path, "np", backend="pread") as f:
        assert f.get_tensor("b").tolist() == [7, 8, 9]
        os.truncate(path, os.path.getsize(path) - 20)
        with pytest.raises(stguard.SafetensorError) as raised:
            f.get_tensor("a")
        assert raised.value.code == "IoError" and raised.value.tensor == "a"
        assert "shrank" in str(raised.value)


def test_unknown_backend_is_an_error_at_open(path):
    for bad in ("mmap2", "PREAD", ""):
        with pytest.raises(ValueError) as raised:
            stguard.safe_open(path, "np", backend=bad)
        assert isinstance(raised.value, stguard.SafetensorError) and "backend" in str(raised.value)
    with pytest.raises(TypeError):
        stguard.safe_open(path, "np", "cpu", "pread")  # backend is keyword-only
    with pytest.raises(ValueError):
        snp.load_file(path, backend="mapped")


def test_every_framework_spelling(path):
    for spelling in ("np", "numpy"):
        with stguard.safe_open(path, spelling) as f:
            assert isinstance(f.get_tensor("a"), np.ndarray)
    torch = torch_or_skip()
    for spelling in ("pt", "torch", "pytorch"):
        with stguard.safe_open(path, spelling) as f:
            assert isinstance(f.get_tensor("a"), torch.Tensor)


@pytest.mark.parametrize("framework,package", [
    ("tf", "tensorflow"), ("tensorflow", "tensorflow"), ("jax", "jax.numpy"),
    ("flax", "jax.numpy"), ("mlx", "mlx.core"), ("paddle", "paddle")])
def test_other_frameworks_name_their_missing_package(path, framework, package, monkeypatch):
    monkeypatch.setitem(sys.modules, package.split(".")[0], None)  # not importable
    with pytest.raises(ImportError) as raised:
        stguard.safe_open(path, framework)
    assert repr(package) in str(raised.value) and isinstance(raised.value, stguard.SafetensorError)


def test_other_frameworks_convert_from_numpy_when_installed(path, monkeypatch):
    fake = types.ModuleType("paddle")
    fake.to_tensor = lambda array: ("paddle tensor", array.tolist())
    monkeypatch.setitem(sys.modules, "paddle", fake)
    with stguard.safe_open(path, "paddle") as f:
        assert f.get_tensor("b") == ("paddle tensor", [7, 8, 9])
    with pytest.raises(ValueError):  # numpy-backed frameworks live on the cpu
        stguard.safe_open(path, "paddle", device="cuda:0")
    with pytest.raises(ValueError) as raised:
        stguard.safe_open(path, "keras")
    assert "'keras' is invalid" in str(raised.value)


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_a_closed_handle_answers_nothing(path, backend):
    with stguard.safe_open(path, "np", backend=backend) as f:
        assert f.keys() == ["a", "b", "c"]
    calls = [f.keys, f.offset_keys, f.metadata, f.get_tensors, lambda: f.get_tensor("a"),
             lambda: f.get_slice("a")]
    for call in calls:
        with pytest.raises(stguard.SafetensorError, match="^File is closed$"):
            call()
    opened = stguard.safe_open(path, "np", backend=backend)
    part = opened.get_slice("a")
    if backend == "mmap":  # a slice taken before closing keeps the mapping it reads
        opened.close()
        assert part[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    else:  # the descriptor it reads through is closed
        opened.close()
        with pytest.raises(stguard.SafetensorError, match="File is closed"):
            part[0]


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_missing_file_is_file_not_found(tmp_path, backend):
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(FileNotFoundError) as raised:
        stguard.safe_open(missing, "np", backend=backend)
    assert raised.value.code == "IoError" and str(missing) in str(raised.value)
    with pytest.raises(FileNotFoundError):
        snp.load_file(missing, backend=backend)
    (tmp_path / "dir.safetensors").mkdir()  # exists but is no file: not FileNotFoundError
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.safe_open(tmp_path / "dir.safetensors", "np", backend=backend)
    assert not isinstance(raised.value, FileNotFoundError)


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_safe_open_handle_reads_the_open_file_not_its_name(path, tmp_path, backend):
    with open(path, "rb") as raw:
        # Replace the name with another valid checkpoint: the handle must read the file
        # the caller opened, which the reference's reopen-by-name would not.
        os.rename(path, tmp_path / "moved.safetensors")
        snp.save_file({"other": np.ones(1, np.float32)}, path)
        with stguard._safe_open_handle(raw, "np", backend=backend) as f:
            assert f.keys() == ["a", "b", "c"]
            assert_same(f.get_tensor("a"), TENSORS["a"])
            assert f.metadata() == {"format": "np"}
        assert not raw.closed  # the caller's file object stays the caller's
        assert raw.read(8)  # and still reads


def test_safe_open_handle_refusals(path, tmp_path):
    with pytest.raises(TypeError):
        stguard._safe_open_handle(str(path), "np")
    with pytest.raises(TypeError):  # has fileno(), but no descriptor behind it
        stguard._safe_open_handle(io.BytesIO(path.read_bytes()), "np")
    with open(tmp_path / "w.bin", "wb") as writer, pytest.raises(ValueError):
        stguard._safe_open_handle(writer, "np")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(raw_file('{"a":{"a":{}}}'))  # a tensor with no fields
    with open(bad, "rb") as raw, pytest.raises(stguard.SafetensorError) as raised:
        stguard._safe_open_handle(raw, "np")
    assert raised.value.code not in ("", "IoError")
    torch = torch_or_skip()
    with open(path, "rb") as raw, stguard._safe_open_handle(raw, "pt", device="cpu") as f:
        assert isinstance(f.get_tensor("b"), torch.Tensor)


def test_save_exception_types_numpy(tmp_path):
    for tensor_dict, kind in (([1, 2], ValueError), ({"a": [1.0]}, ValueError),
                              ({1: np.ones(1)}, TypeError)):
        with pytest.raises(kind) as raised:
            snp.save(tensor_dict)
        assert isinstance(raised.value, stguard.SafetensorError)
    with pytest.raises(TypeError):
        snp.save_file({"a": np.ones(1)}, tmp_path / "x.safetensors", metadata={"k": 1})
    assert not (tmp_path / "x.safetensors").exists()


def test_pread_handles_close_their_descriptor(path):
    def open_descriptors():
        return len(os.listdir("/proc/self/fd"))

    gc.collect()  # handles earlier tests left behind close now, not during the count
    before = open_descriptors()
    handles = [stguard.safe_open(path, "np", backend="pread") for _ in range(20)]
    assert open_descriptors() >= before + 20  # the accept side: each holds one
    for handle in handles[:10]:
        handle.close()
    del handles
    gc.collect()  # the unclosed ones close when collected
    assert open_descriptors() == before
