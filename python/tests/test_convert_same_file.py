# SPDX-License-Identifier: Apache-2.0
"""stguard.convert never writes over its input (the same path, a hard link, a symbolic
link), except a safetensors file converted in place; a training checkpoint's error names
the key, as `stguard convert` does."""
import os
import shutil

import numpy
import pytest

import stguard
from conftest import CORPUS

TORCH = CORPUS / "torch" / "valid"


def _inputs(tmp_path):
    numpy.save(tmp_path / "w.npy", numpy.arange(4, dtype=numpy.float32))
    numpy.savez(tmp_path / "w.npz", a=numpy.arange(4, dtype=numpy.float32))
    shutil.copy(TORCH / "training.zip.pt", tmp_path / "t.pt")
    shutil.copy(TORCH / "module_state_dict.legacy.pt", tmp_path / "m.bin")
    return [("w.npy", {}), ("w.npz", {}), ("t.pt", {"key": "state_dict"}), ("m.bin", {})]


@pytest.mark.parametrize("way", ["path", "hard link", "symbolic link"])
def test_out_that_is_in_is_refused_and_the_input_kept(tmp_path, way):
    for name, options in _inputs(tmp_path):
        source = tmp_path / name
        before = source.read_bytes()
        out = source
        if way == "hard link":
            out = tmp_path / ("hard-" + name)
            os.link(source, out)
        elif way == "symbolic link":
            out = tmp_path / ("soft-" + name)
            os.symlink(source, out)
        with pytest.raises(stguard.SafetensorError) as raised:
            stguard.convert(source, out, **options)
        assert raised.value.code == "InvalidArgument", name
        assert "OUT is IN" in str(raised.value), name
        assert source.read_bytes() == before, name
        # The accept case: a new path converts and leaves the input as it was.
        assert stguard.convert(source, tmp_path / (name + ".safetensors"), **options).tensors > 0
        assert source.read_bytes() == before, name


def test_safetensors_converts_in_place(tmp_path):
    stguard.convert(TORCH / "dtypes.zip.pt", tmp_path / "f.safetensors")
    path = tmp_path / "f.safetensors"
    assert stguard.convert(path, path, "F16").converted > 0


def test_training_checkpoint_error_names_the_key(tmp_path):
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(TORCH / "training.zip.pt", tmp_path / "out.safetensors")
    assert raised.value.code == "NotAStateDict"
    assert "needs --key" in str(raised.value) and "--key state_dict" in str(raised.value)
    assert not (tmp_path / "out.safetensors").exists()


def test_converted_counts_dtype_changes_for_torch(tmp_path):
    # dtypes.zip.pt holds floating and integer tensors: without dtype none changes dtype.
    plain = stguard.convert(TORCH / "dtypes.zip.pt", tmp_path / "a.safetensors")
    assert plain.converted == 0 and plain.tensors > 0
    half = stguard.convert(TORCH / "dtypes.zip.pt", tmp_path / "b.safetensors", "F16")
    assert 0 < half.converted < half.tensors


def test_converted_counts_dtype_changes_for_npy_and_npz(tmp_path):
    numpy.save(tmp_path / "w.npy", numpy.arange(4, dtype=numpy.float32))
    numpy.savez(tmp_path / "w.npz", a=numpy.arange(4, dtype=numpy.float32),
                b=numpy.arange(4, dtype=numpy.int32))
    assert stguard.convert(tmp_path / "w.npy", tmp_path / "a.safetensors").converted == 0
    assert stguard.convert(tmp_path / "w.npy", tmp_path / "b.safetensors", "F16").converted == 1
    assert stguard.convert(tmp_path / "w.npz", tmp_path / "c.safetensors").converted == 0
    half = stguard.convert(tmp_path / "w.npz", tmp_path / "d.safetensors", "F16")
    assert (half.tensors, half.converted) == (2, 1)


def test_converted_counts_dtype_changes_for_a_torch_folder(tmp_path):
    # A folder of PyTorch weights counts as its file does: the tensors whose dtype changed.
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(TORCH / "dtypes.zip.pt", folder / "pytorch_model.bin")
    plain = stguard.convert(folder, tmp_path / "plain")
    assert plain.converted == 0 and plain.tensors > 0
    half = stguard.convert(folder, tmp_path / "half", "F16")
    one = stguard.convert(TORCH / "dtypes.zip.pt", tmp_path / "one.safetensors", "F16")
    assert half.converted == one.converted and 0 < half.converted < half.tensors


def test_a_sharded_torch_folder_converted_to_a_dtype_indexes_the_new_sizes(tmp_path):
    # The index's total_size is the data written: after conversion, not before.
    import json
    out = tmp_path / "half"
    half = stguard.convert(TORCH / "sharded", out, "F16")
    index = json.loads((out / "model.safetensors.index.json").read_text())
    data_bytes = 0
    for name in set(index["weight_map"].values()):
        shard = (out / name).read_bytes()
        data_bytes += len(shard) - 8 - int.from_bytes(shard[:8], "little")
    assert index["metadata"]["total_size"] == data_bytes
    plain = stguard.convert(TORCH / "sharded", tmp_path / "plain")
    assert plain.converted == 0 and 0 < half.converted <= half.tensors


def test_every_format_converts_through_one_call_and_refuses_out_that_is_in(tmp_path):
    """stguard.convert and _core.convert are the library's one ConvertPath: a GGUF input
    is refused as OUT too, and the result counts dtype changes as for every format."""
    from stguard import _core
    from test_gguf_convert import gguf_bytes
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(gguf_bytes())
    before = gguf.read_bytes()
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(gguf, gguf)
    assert raised.value.code == "InvalidArgument" and "OUT is IN" in str(raised.value)
    assert gguf.read_bytes() == before
    done = _core.convert(str(gguf), str(tmp_path / "a.safetensors"), "BF16")
    assert (done["tensors"], done["converted"]) == (3, 2)
    assert (tmp_path / "a.safetensors").read_bytes() == \
        _convert_bytes(tmp_path, gguf, "BF16")
    with pytest.raises(stguard.SafetensorError) as raised:
        _core.convert(str(TORCH / "training.zip.pt"), str(tmp_path / "t.safetensors"))
    assert "--key state_dict" in str(raised.value)


def _convert_bytes(tmp_path, path, dtype):
    out = tmp_path / "front.safetensors"
    stguard.convert(path, out, dtype)
    return out.read_bytes()
