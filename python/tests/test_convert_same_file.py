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


def _refused_folder(tmp_path):
    folder = tmp_path / "refused_folder"
    folder.mkdir()
    shutil.copy(CORPUS / "torch" / "refuse" / "PickleBadArguments__build_setattr.pt",
                folder / "pytorch_model.bin")
    return folder


@pytest.mark.parametrize("case", ["os.system pickle", "folder", "needs key", "key on npy"])
def test_a_failed_conversion_has_the_commands_verdict(tmp_path, cli, case):
    """The library decides a failed conversion's verdict: Python raises with the verdict,
    code, offset and member `stguard convert --json` prints, and its exit status."""
    import json
    import subprocess
    numpy.save(tmp_path / "w.npy", numpy.arange(4, dtype=numpy.float32))
    source, options, flags = {
        "os.system pickle": (CORPUS / "torch" / "refuse" /
                             "PickleGlobalRefused__raw_os_system.pt", {}, []),
        "folder": (_refused_folder(tmp_path), {}, []),
        "needs key": (TORCH / "training.zip.pt", {}, []),
        "key on npy": (tmp_path / "w.npy", {"key": "x"}, ["--key", "x"]),
    }[case]
    out = tmp_path / "out"
    run = subprocess.run([cli, "convert", "--json", *flags, str(source), str(out)],
                         capture_output=True, text=True, check=False)
    envelope = json.loads(run.stdout)
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(source, out, **options)
    error = raised.value
    assert envelope["verdict"] != "valid" and error.verdict == envelope["verdict"], case
    assert run.returncode == {"refused": 1, "invalid": 1, "error": 2}[error.verdict]
    assert error.code == envelope["code"] and error.offset == envelope.get("offset", 0)
    assert error.member == envelope.get("member", "")
    assert not out.exists()
    if case == "needs key":
        # The CLI's sentence, word for word, naming the keys.
        assert str(error) in run.stderr or str(error) == envelope["error"]["context"]
        assert "--key state_dict" in str(error)


def test_a_pytorch_file_converts_to_a_dtype_in_one_call(tmp_path, monkeypatch):
    """convert(dtype=...) of a PyTorch file is one library call: the dtype is applied as
    the tensors stream, with no intermediate file beside the output."""
    import stguard._front_door as front_door
    calls = []
    real = front_door._core.convert

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(front_door._core, "convert", counting)
    out = tmp_path / "half.safetensors"
    assert stguard.convert(TORCH / "dtypes.zip.pt", out, "F16").converted > 0
    assert calls == [str(TORCH / "dtypes.zip.pt")]
    assert [p.name for p in tmp_path.iterdir()] == ["half.safetensors"]
