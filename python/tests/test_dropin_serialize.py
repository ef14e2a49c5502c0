# SPDX-License-Identifier: Apache-2.0
"""The reference package's framework-free API: serialize, serialize_file, deserialize and
TensorSpec (dicts, keyword-only specs, torch-style dtype names, buffers and raw pointers),
and serialize_file releasing the GIL."""

import sys
import threading
import time

import numpy as np
import pytest

import stguard
import stguard.numpy as snp


def test_dict_form_matches_numpy_save_byte_for_byte():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, -2], dtype=np.int64)
    data = stguard.serialize({"a": {"dtype": "float32", "shape": [2, 3], "data": a.tobytes()},
                              "b": {"dtype": "int64", "shape": (2,), "data": b.tobytes()}},
                             metadata={"format": "np"})
    assert data == snp.save({"a": a, "b": b}, metadata={"format": "np"})
    assert dict(stguard.deserialize(data)) == {
        "a": {"dtype": "F32", "shape": [2, 3], "data": bytearray(a.tobytes())},
        "b": {"dtype": "I64", "shape": [2], "data": bytearray(b.tobytes())}}
    assert [name for name, _ in stguard.deserialize(data)] == ["b", "a"]  # file order


def test_tensor_spec_is_keyword_only_with_torch_names():
    with pytest.raises(TypeError):
        stguard.TensorSpec("float32", [1], 0, 0)  # positional, as the reference refuses
    spec = stguard.TensorSpec(dtype="bfloat16", shape=[2], data=b"\x80\x3f\x00\x40")
    assert (spec.dtype, spec.shape, spec.data_len, spec.data_ptr) == ("BF16", [2], 4, 0)
    for name, code in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2"),
                       ("bool", "BOOL"), ("uint16", "U16"), ("complex64", "C64"),
                       ("F32", "F32")):
        assert stguard.TensorSpec(dtype=name, shape=[0], data=b"").dtype == code
    # float4_e2m1fn_x2: torch's storage shape, two values per byte -> logical shape
    assert stguard.TensorSpec(dtype="float4_e2m1fn_x2", shape=[3, 2], data=b"\0" * 6).shape == [3, 4]


def test_unknown_dtype_is_refused_at_construction():
    for bad in ("float128", "f32", "", None):
        with pytest.raises(stguard.SafetensorError) as raised:
            stguard.TensorSpec(dtype=bad, shape=[1], data=b"\0")
        assert isinstance(raised.value, ValueError)
        assert "unknown dtype" in str(raised.value)


def test_data_len_is_checked_at_serialize_time():
    spec = stguard.TensorSpec(dtype="float32", shape=[3], data=b"\0" * 8)  # 12 needed
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.serialize({"x": spec})
    assert raised.value.code == "InvalidArgument" and raised.value.tensor == "x"
    assert stguard.serialize({"x": stguard.TensorSpec(dtype="float32", shape=[2], data=b"\0" * 8)})


def test_data_ptr_reads_the_memory_it_points_at(tmp_path):
    values = np.arange(5, dtype=np.int16)
    spec = stguard.TensorSpec(dtype="int16", shape=[5], data_ptr=values.ctypes.data,
                              data_len=values.nbytes)
    assert spec.data_ptr == values.ctypes.data and spec.data_len == 10
    stguard.serialize_file({"v": spec}, tmp_path / "v.safetensors")
    np.testing.assert_array_equal(snp.load_file(tmp_path / "v.safetensors")["v"], values)
    empty = stguard.TensorSpec(dtype="int16", shape=[0], data_ptr=0, data_len=0)
    assert stguard.deserialize(stguard.serialize({"e": empty}))[0][1]["data"] == bytearray()
    with pytest.raises(ValueError):  # a null pointer with bytes to read
        stguard.TensorSpec(dtype="int16", shape=[1], data_ptr=0, data_len=2)


def test_buffer_protocol_data_without_copy():
    array = np.arange(4, dtype=np.float32)
    for data in (array, memoryview(array), bytearray(array.tobytes()), array.tobytes()):
        out = stguard.serialize({"a": stguard.TensorSpec(dtype="float32", shape=[4], data=data)})
        assert out == snp.save({"a": array})
    with pytest.raises(ValueError):  # a strided view is not one contiguous buffer
        stguard.TensorSpec(dtype="float32", shape=[2], data=memoryview(array)[::2])
    with pytest.raises(TypeError):
        stguard.TensorSpec(dtype="float32", shape=[1], data=1.5)
    with pytest.raises(TypeError):  # both forms at once
        stguard.TensorSpec(dtype="float32", shape=[1], data=b"\0" * 4, data_ptr=1, data_len=4)


def test_wrong_types_are_type_errors():
    for tensor_dict in ({"a": {"dtype": "float32", "shape": [1]}},  # 0.8's pointer dicts
                        {"a": [1.0]}, {1: {"dtype": "int8", "shape": [1], "data": b"\0"}},
                        [("a", None)]):
        with pytest.raises(TypeError) as raised:
            stguard.serialize(tensor_dict)
        assert isinstance(raised.value, stguard.SafetensorError)
    good = {"a": {"dtype": "int8", "shape": [1], "data": b"\0"}}
    for metadata in ({"k": 1}, {1: "v"}, ["k"]):
        with pytest.raises(TypeError):
            stguard.serialize(good, metadata=metadata)
    assert stguard.serialize(good, metadata={"k": "v"})


def test_deserialize_refuses_an_invalid_file():
    data = bytearray(stguard.serialize({"a": {"dtype": "int8", "shape": [1], "data": b"\0"}}))
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.deserialize(bytes(data[:-1]))
    assert raised.value.code != "" and raised.value.offset >= 0
    data = bytearray(snp.save({"a": np.zeros(1, np.int8)}))
    assert stguard.deserialize(bytes(data))[0][0] == "a"


def main_thread_ran_during(call) -> bool:
    """Runs ``call`` in a thread under a huge switch interval, so that the thread keeps the
    GIL until it releases it itself, and says whether the main thread ran again before
    ``call`` returned (it can only if ``call`` released the GIL)."""
    state = {"returned": False}

    def run():
        call()
        state["returned"] = True

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.001)  # lets the worker take the GIL; back only when it gives it up
        ran_before_return = not state["returned"]
        worker.join()
    finally:
        sys.setswitchinterval(old_interval)
    return ran_before_return


def test_serialize_file_releases_the_gil(tmp_path):
    payload = np.zeros(48 << 20, dtype=np.uint8)
    spec = stguard.TensorSpec(dtype="uint8", shape=[payload.size], data=payload)
    path = tmp_path / "big.safetensors"
    assert main_thread_ran_during(lambda: stguard.serialize_file({"big": spec}, path))
    with stguard.safe_open(path, "np") as f:
        assert f.get_slice("big").get_shape() == [payload.size]
    # The control: a copy that holds the GIL throughout is seen as holding it.
    assert not main_thread_ran_during(lambda: payload.tobytes())
