# SPDX-License-Identifier: Apache-2.0
"""save_file and save write the C++ canonical writer's bytes (the reference's bytes),
atomically, and refuse what the reference refuses, writing nothing."""

import os
import struct
import subprocess

import numpy as np
import pytest

import stguard
import stguard.numpy as snp
from conftest import CORPUS


def test_reference_bytes_for_the_documented_example():
    # The reference's save_file({"test": zeros((2, 2), float32)}) gives this file.
    header = b'{"test":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}'
    header += b" " * (-len(header) % 8)
    expected = struct.pack("<Q", len(header)) + header + bytes(16)
    assert snp.save({"test": np.zeros((2, 2), np.float32)}) == expected


def mixed_tensors():
    rng = np.random.default_rng(7)
    return {
        "model.layers.0.weight": rng.standard_normal((4, 8)).astype(np.float32),
        "model.layers.0.bias": rng.standard_normal(8).astype(np.float16),
        "ids": np.arange(10, dtype=np.int64),
        "mask": np.array([True, False, True]),
        "ünï/cödé \u0001\"": np.arange(3, dtype=np.uint8),
        "z": np.array(1.5, dtype=np.float64),
        "c": np.ones(2, np.complex64),
        "u": np.arange(4, dtype=np.uint32),
    }


def test_save_file_equals_cpp_canonical_writer(cli, tmp_path):
    metadata = {"format": "np", "b": "2", "a": "1"}
    saved = tmp_path / "saved.safetensors"
    snp.save_file(mixed_tensors(), saved, metadata=metadata)
    # The C++ writer rewrites the file canonically: it must come out unchanged.
    canon = tmp_path / "canon.safetensors"
    subprocess.run([cli, "canon", str(saved), str(canon)], check=True)
    assert canon.read_bytes() == saved.read_bytes()
    assert subprocess.run([cli, "check", "--canonical", str(saved)]).returncode == 0
    assert snp.save(mixed_tensors(), metadata=metadata) == saved.read_bytes()


@pytest.mark.parametrize("name", ["worked_example", "scalar",
                                  "whitespace_around_object", "escaped_and_unicode_names",
                                  "zero_size_shares_offset", "empty_metadata_object"])
def test_resaving_a_corpus_file_equals_cpp_canon(cli, tmp_path, name):
    source = CORPUS / "valid" / f"{name}.safetensors"
    with stguard.safe_open(source, "np") as f:
        tensors = {key: f.get_tensor(key) for key in f.keys()}
        metadata = f.metadata() or None
    canon = tmp_path / "canon.safetensors"
    subprocess.run([cli, "canon", str(source), str(canon)], check=True)
    assert snp.save(tensors, metadata=metadata) == canon.read_bytes()


def test_torch_resave_of_bf16_file_equals_cpp_canon(cli, tmp_path):
    pytest.importorskip("torch")
    import stguard.torch as st

    source = CORPUS / "valid" / "fields_in_any_order.safetensors"  # one BF16 tensor
    canon = tmp_path / "canon.safetensors"
    subprocess.run([cli, "canon", str(source), str(canon)], check=True)
    assert st.save(st.load_file(source)) == canon.read_bytes()


def test_refusals_write_nothing(tmp_path):
    path = tmp_path / "keep.safetensors"
    snp.save_file({"a": np.ones(2, np.float32)}, path)
    before = path.read_bytes()
    refusals = [
        ({"__metadata__": np.ones(1, np.float32)}, None, "InvalidTensorName"),
        ({"a": np.ones(1, np.float32)}, {"k": 1}, "InvalidArgument"),
        ({"a": np.ones(1, np.float32)}, {1: "v"}, "InvalidArgument"),
        ({"a": np.ones(1, np.complex128)}, None, "InvalidArgument"),
        ({"a": np.array(["text"])}, None, "InvalidArgument"),
        ({"a": [1.0, 2.0]}, None, "InvalidArgument"),
        ({1: np.ones(1)}, None, "InvalidArgument"),
        ({"\ud800": np.ones(1)}, None, "InvalidArgument"),
    ]
    for tensors, metadata, code in refusals:
        with pytest.raises(stguard.SafetensorError) as raised:
            snp.save_file(tensors, path, metadata=metadata)
        assert raised.value.code == code, tensors
        with pytest.raises(stguard.SafetensorError):
            snp.save(tensors, metadata=metadata)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.safetensors"]  # no temporary file left


def test_io_error_and_overwrite(tmp_path):
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.save_file({"a": np.ones(1)}, tmp_path / "no" / "such" / "dir.safetensors")
    assert raised.value.code == "IoError"
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.save_file({"a": np.ones(1)}, tmp_path)
    assert raised.value.code == "NotARegularFile"
    # Rewriting the file being read is safe: the old mapping keeps the old bytes.
    path = tmp_path / "same.safetensors"
    snp.save_file({"a": np.arange(4.0)}, path)
    old = snp.load_file(path)
    snp.save_file({"a": old["a"] * 10}, path)
    np.testing.assert_array_equal(old["a"], np.arange(4.0))
    np.testing.assert_array_equal(snp.load_file(path)["a"], np.arange(4.0) * 10)


def test_torch_refuses_shared_memory_and_non_contiguous(tmp_path):
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    weight = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    path = tmp_path / "t.safetensors"
    for shared in ({"embed": weight, "lm_head": weight},          # tied weights
                   {"whole": weight, "row": weight[1]},            # a view inside another
                   {"a": weight[:2], "b": weight[1:]}):            # overlapping views
        with pytest.raises(stguard.SafetensorError) as raised:
            st.save_file(shared, path)
        assert raised.value.code == "InvalidArgument"
        assert "share memory" in str(raised.value)
    assert not path.exists()
    # Disjoint views of one storage do not overlap: the reference saves them, so do we.
    st.save_file({"top": weight[0], "bottom": weight[2]}, path)
    loaded = st.load_file(path)
    assert torch.equal(loaded["top"], weight[0]) and torch.equal(loaded["bottom"], weight[2])
    # A non-contiguous tensor is refused, as by the reference (the file is not written);
    # made contiguous by the caller, it saves.
    other = torch.arange(20, dtype=torch.int32).reshape(4, 5)
    path.unlink()
    for strided in ({"t": weight.t()}, {"step": other[:, ::2]}):
        with pytest.raises(ValueError, match="non contiguous tensor"):
            st.save_file(strided, path)
    assert not path.exists()
    st.save_file({"t": weight.t().contiguous(), "step": other[:, ::2].contiguous()}, path)
    loaded = st.load_file(path)
    assert torch.equal(loaded["t"], weight.t()) and torch.equal(loaded["step"], other[:, ::2])
    with pytest.raises(stguard.SafetensorError):
        st.save({"s": weight.to_sparse()})
    with pytest.raises(stguard.SafetensorError):
        st.save({"__metadata__": weight})
    # torch and numpy write the same bytes for the same values
    assert st.save({"w": weight}, metadata={"format": "pt"}) == \
        snp.save({"w": weight.numpy()}, metadata={"format": "pt"})
