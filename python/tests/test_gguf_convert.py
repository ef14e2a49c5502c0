# SPDX-License-Identifier: Apache-2.0
"""stguard.gguf: open() (metadata, tensor infos, zero-copy copy-on-write views of plain
tensors, dequantized quantized ones), load_file's memory limit, convert() read back with
stguard.numpy, and errors as SafetensorError with code and offset."""
import json
import math
import struct

import numpy as np
import pytest

import stguard
import stguard.gguf
import stguard.numpy


def string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_bytes(q8_scale=0x3C00, trailing=b"", extra_kv=b"", extra_kvs=0):
    """A GGUF v3 file: four keys, an f32 tensor ne (4, 2), an i32 tensor ne (3,) and a
    q8_0 tensor ne (32, 2) (two blocks: f16 scale, 32 int8 values), laid out as ggml does."""
    kvs = (string("general.architecture") + struct.pack("<I", 8) + string("llama")
           + string("llama.context_length") + struct.pack("<II", 4, 4096)
           + string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.5, -1, 2)
           + string("general.flag") + struct.pack("<IB", 7, 1) + extra_kv)
    tensors = (string("w") + struct.pack("<IQQIQ", 2, 4, 2, 0, 0)
               + string("ids") + struct.pack("<IQIQ", 1, 3, 26, 32)
               + string("q") + struct.pack("<IQQIQ", 2, 32, 2, 8, 64))
    out = b"GGUF" + struct.pack("<IQQ", 3, 3, 4 + extra_kvs) + kvs + tensors
    out += b"\0" * (-len(out) % 32)
    data = struct.pack("<8f", *range(8)).ljust(32, b"\0")
    data += struct.pack("<3i", 7, -8, 9).ljust(32, b"\0")
    for block in range(2):
        data += struct.pack("<H", q8_scale) + bytes((i * (block + 1)) % 256 for i in range(32))
    data = data.ljust(64 + 96, b"\0")
    return out + data + trailing


def q8_expected(scale=1.0):
    values = np.array([[((i * (b + 1)) % 256) for i in range(32)] for b in range(2)], np.uint8)
    return values.view(np.int8).astype(np.float32) * np.float32(scale)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_bytes())
    return path


def test_open_gives_metadata_infos_and_tensors(model):
    with stguard.gguf.open(model) as f:
        assert (f.version, f.alignment) == (3, 32)
        assert f.metadata == {"general.architecture": "llama", "llama.context_length": 4096,
                              "tokenizer.ggml.scores": [0.5, -1.0, 2.0], "general.flag": True}
        assert f.keys() == ["w", "ids", "q"]
        info = f.tensor_info("q")
        assert (info.type, info.ne, info.shape, info.bytes) == ("q8_0", (32, 2), (2, 32), 68)
        w = f.get_tensor("w")
        assert w.dtype == np.float32 and w.shape == (2, 4)
        assert w.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert f.get_tensor("ids").tolist() == [7, -8, 9]
        q = f.get_tensor("q")
        assert q.dtype == np.float32 and q.shape == (2, 32)
        np.testing.assert_array_equal(q, q8_expected())
        raw = f.get_tensor("q", dequantize=False)
        assert raw.dtype == np.uint8 and raw.shape == (2, 34)


def test_plain_views_are_zero_copy_and_copy_on_write(model):
    before = model.read_bytes()
    with stguard.gguf.open(model) as f:
        w = f.get_tensor("w")
        assert not w.flags.owndata and w.flags.writeable
        w[0, 0] = 42
        assert f.get_tensor("w")[0, 0] == 42  # the same memory
    assert model.read_bytes() == before  # the file never changes


def test_errors_are_safetensor_errors_with_code_and_offset(tmp_path):
    path = tmp_path / "bad.gguf"
    data = gguf_bytes(trailing=b"junk")
    path.write_bytes(data)
    with pytest.raises(stguard.SafetensorError) as error:
        stguard.gguf.open(path)
    assert error.value.code == "GgufTrailingBytes"
    assert error.value.offset == len(data) - 4
    with stguard.gguf.open(_write(tmp_path / "ok.gguf", gguf_bytes())) as f:
        with pytest.raises(stguard.SafetensorError) as error:
            f.tensor_info("absent")
        assert error.value.code == "InvalidArgument"


def _write(path, data):
    path.write_bytes(data)
    return path


def test_load_file_states_the_memory_and_refuses_past_max_bytes(model):
    tensors = stguard.gguf.load_file(model)
    assert list(tensors) == ["w", "ids", "q"]
    np.testing.assert_array_equal(tensors["q"], q8_expected())
    assert stguard.gguf.load_file(model, max_bytes=256)["q"].nbytes == 256
    with pytest.raises(stguard.SafetensorError) as error:
        stguard.gguf.load_file(model, max_bytes=255)
    assert error.value.code == "InvalidArgument"
    assert "needs 256 bytes" in str(error.value) and "open()" in str(error.value)


def test_convert_reads_back_with_stguard_numpy(model, tmp_path):
    out = tmp_path / "out.safetensors"
    report = stguard.gguf.convert(model, out)
    assert (report.tensors, report.dequantized) == (3, 1)
    loaded = stguard.numpy.load_file(out)
    assert loaded["w"].shape == (2, 4) and loaded["w"].dtype == np.float32
    assert loaded["ids"].tolist() == [7, -8, 9]
    np.testing.assert_array_equal(loaded["q"], q8_expected())
    with stguard.safe_open(out, framework="np") as f:
        assert f.metadata()["llama.context_length"] == '{"u32":4096}'
        assert f.metadata()["tokenizer.ggml.scores"] == '{"f32":[0.5,-1.0,2.0]}'
    report = stguard.gguf.convert(model, out, dtype="F16")
    assert stguard.numpy.load_file(out)["q"].dtype == np.float16
    with pytest.raises(stguard.SafetensorError) as error:
        stguard.gguf.convert(model, out, dtype="I8")
    assert error.value.code == "InvalidArgument"


def test_convert_leaves_out_long_arrays_unless_all_metadata(tmp_path):
    long = string("a.long") + struct.pack("<IIQ", 9, 5, 2000) + struct.pack("<2000i", *range(2000))
    path = _write(tmp_path / "long.gguf", gguf_bytes(extra_kv=long, extra_kvs=1))
    out = tmp_path / "out.safetensors"
    report = stguard.gguf.convert(path, out)
    assert report.omitted == [("a.long", "i32", 2000)]
    report = stguard.gguf.convert(path, out, all_metadata=True)
    assert report.omitted == []
    with stguard.safe_open(out, framework="np") as f:
        assert f.metadata()["a.long"].startswith('{"i32":[0,1,2,')


def test_a_nan_scale_dequantizes_as_ggml_does(tmp_path):
    path = _write(tmp_path / "nan.gguf", gguf_bytes(q8_scale=0x7E00))  # f16 quiet NaN
    with stguard.gguf.open(path) as f:
        q = f.get_tensor("q")
    # NaN times 0 is NaN too: every element is NaN.
    assert np.isnan(q).all()


def test_the_front_door_converts_gguf_and_npz(model, tmp_path):
    out = tmp_path / "front.safetensors"
    result = stguard.convert(model, out, dtype="F16")
    # converted counts the tensors whose dtype changed, as for every format: q dequantized
    # and w rewritten from F32 to F16 (ids, an integer tensor, is copied).
    assert (result.format, result.tensors, result.converted) == ("gguf", 3, 2)
    assert stguard.convert(model, tmp_path / "plain.safetensors").converted == 1  # q only
    loaded = stguard.numpy.load_file(out)
    assert loaded["q"].dtype == np.float16
    np.testing.assert_array_equal(loaded["q"], q8_expected().astype(np.float16))
    with pytest.raises(stguard.SafetensorError) as error:
        stguard.convert(model, out, name="x")  # --name applies to npy only
    assert error.value.code == "InvalidArgument" and "name" in str(error.value)

    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], np.int64)}
    np.savez_compressed(tmp_path / "arrays.npz", **arrays)
    result = stguard.convert(tmp_path / "arrays.npz", tmp_path / "npz.safetensors")
    assert (result.format, result.tensors) == ("npz", 2)
    loaded = stguard.numpy.load_file(tmp_path / "npz.safetensors")
    for key, value in arrays.items():
        np.testing.assert_array_equal(loaded[key], value)


def test_float_metadata_reads_back_as_the_same_float(tmp_path):
    """f32/f64 values: Python floats from open(), and in convert's __metadata__ JSON text
    that json.loads reads as the same float (-0.0 keeps its sign, 1.0 stays a float);
    NaN and the infinities as the strings "nan", "inf", "-inf"."""
    extra = (string("v.neg_zero") + struct.pack("<If", 6, -0.0)
             + string("v.one") + struct.pack("<Id", 12, 1.0)
             + string("v.nan") + struct.pack("<II", 6, 0x7FC00000)
             + string("v.minus_inf") + struct.pack("<Id", 12, -math.inf))
    path = tmp_path / "floats.gguf"
    path.write_bytes(gguf_bytes(extra_kv=extra, extra_kvs=4))
    with stguard.gguf.open(path) as f:
        assert math.copysign(1, f.metadata["v.neg_zero"]) == -1.0
        assert f.metadata["v.one"] == 1.0 and isinstance(f.metadata["v.one"], float)
        assert math.isnan(f.metadata["v.nan"])
        assert f.metadata["v.minus_inf"] == -math.inf
    out = tmp_path / "floats.safetensors"
    stguard.gguf.convert(path, out)
    with stguard.safe_open(out, framework="np") as f:
        meta = {key: json.loads(f.metadata()[key]) for key in
                ("v.neg_zero", "v.one", "v.nan", "v.minus_inf")}
    assert isinstance(meta["v.neg_zero"]["f32"], float)
    assert math.copysign(1, meta["v.neg_zero"]["f32"]) == -1.0
    assert meta["v.one"] == {"f64": 1.0} and isinstance(meta["v.one"]["f64"], float)
    assert meta["v.nan"] == {"f32": "nan"} and meta["v.minus_inf"] == {"f64": "-inf"}
