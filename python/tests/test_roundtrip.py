# SPDX-License-Identifier: Apache-2.0
"""Round trips through stguard.numpy and stguard.torch: every dtype both ways, metadata,
empty and scalar tensors, unicode names, and the dtype each safetensors type loads as."""

import struct

import numpy as np
import pytest

import stguard
import stguard.numpy as snp
from conftest import CORPUS

NUMPY_DTYPES = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "U16": np.uint16,
    "F16": np.float16, "I32": np.int32, "U32": np.uint32, "F32": np.float32,
    "C64": np.complex64, "F64": np.float64, "I64": np.int64, "U64": np.uint64,
}


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape, dtype=np.int64))
    raw = rng.integers(0, 256, size=count * np.dtype(dtype).itemsize, dtype=np.uint8)
    array = raw.view(dtype).reshape(shape) if count else np.zeros(shape, dtype)
    if np.dtype(dtype).kind == "b":
        array = (raw[:count] & 1).astype(bool).reshape(shape)
    if np.dtype(dtype).kind in "fc":
        array = np.asarray(np.nan_to_num(array))  # NaN != NaN; the bytes are compared separately
    return array


def header_of(data: bytes) -> str:
    (length,) = struct.unpack("<Q", data[:8])
    return data[8:8 + length].decode()


@pytest.mark.parametrize("name", sorted(NUMPY_DTYPES))
def test_numpy_round_trip_every_dtype(tmp_path, name):
    dtype = NUMPY_DTYPES[name]
    tensors = {"x": sample(dtype, (3, 5), 1), "scalar": sample(dtype, (), 2),
               "empty": sample(dtype, (0, 4), 3)}
    path = tmp_path / "a.safetensors"
    snp.save_file(tensors, path)
    assert f'"dtype":"{name}"' in header_of(path.read_bytes())
    for loaded in (snp.load_file(path), snp.load(path.read_bytes())):
        assert set(loaded) == set(tensors)
        for key, array in tensors.items():
            assert loaded[key].dtype == np.dtype(dtype)
            assert loaded[key].shape == array.shape
            assert loaded[key].tobytes() == array.tobytes()
    # file -> numpy -> file gives the same bytes
    assert snp.save(snp.load_file(path)) == path.read_bytes()


def test_numpy_loads_every_safetensors_dtype_as_documented():
    path = CORPUS / "valid" / "every_dtype.safetensors"
    expected = {"BF16": np.uint16, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8,
                "F8_E8M0": np.uint8, "F8_E4M3FNUZ": np.uint8, "F8_E5M2FNUZ": np.uint8,
                "F6_E2M3": np.uint8, "F6_E3M2": np.uint8, "F4": np.uint8, **NUMPY_DTYPES}
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    with stguard.safe_open(path, framework="np") as f:
        assert len(f.keys()) == 22
        for key in f.keys():
            part = f.get_slice(key)
            array = f.get_tensor(key)
            assert array.dtype == np.dtype(expected[part.get_dtype()]), key
    loaded = snp.load_file(path)
    header = header_of(raw)
    import json

    entries = json.loads(header)
    data = raw[8 + length:]
    for key, entry in entries.items():
        if key == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        assert loaded[key].tobytes() == data[begin:end], key
    # Packed types: the last dimension counts bytes (F4 [8] -> 4 bytes, F6 [8] -> 6 bytes).
    assert loaded["t_f4"].shape == (4,)
    assert loaded["t_f6_e2m3"].shape == (6,)


def test_sub_byte_shapes():
    # F4 [2, 4]: the last dimension fills whole bytes -> (2, 2); F4 [2, 3]: it does not
    # (3 * 4 bits) -> the 3 packed bytes, flat.
    for shape, byte_len, expected in (([2, 4], 4, (2, 2)), ([2, 3], 3, (3,)), ([4, 0], 0, (4, 0))):
        header = ('{"t":{"dtype":"F4","shape":%s,"data_offsets":[0,%d]}}'
                  % (str(shape).replace(" ", ""), byte_len))
        data = struct.pack("<Q", len(header)) + header.encode() + bytes(range(byte_len))
        assert snp.load(data)["t"].shape == expected


def test_metadata_round_trip(tmp_path):
    metadata = {"format": "np", "z": "last", "é": "ünïcode", "": "empty key", "a\nb": "\x00"}
    path = tmp_path / "m.safetensors"
    snp.save_file({"w": np.ones(2, np.float32)}, path, metadata=metadata)
    with stguard.safe_open(path, "np") as f:
        assert f.metadata() == metadata
    header = header_of(path.read_bytes())
    # keys in byte order, __metadata__ first
    assert header.startswith('{"__metadata__":{"":"empty key","a\\nb":"\\u0000","format"')
    with stguard.safe_open(CORPUS / "valid" / "scalar.safetensors", "np") as f:
        assert f.metadata() is None


def test_unicode_names_and_order(tmp_path):
    tensors = {"ß": np.arange(3, dtype=np.int64), "日本語.weight": np.ones((2, 2), np.float32),
               "a\"quote\\": np.zeros(1, np.int64), "emoji 🦀": np.array(True)}
    path = tmp_path / "u.safetensors"
    snp.save_file(tensors, path)
    with stguard.safe_open(path, "np") as f:
        assert f.keys() == sorted(tensors)
        # file order: dtype order (I64 before F32 before BOOL), then name bytes
        assert f.offset_keys() == ['a"quote\\', "ß", "日本語.weight", "emoji 🦀"]
        for key, array in tensors.items():
            np.testing.assert_array_equal(f.get_tensor(key), array)


def test_empty_checkpoint_and_empty_tensors(tmp_path):
    data = snp.save({})
    assert data == struct.pack("<Q", 8) + b"{}      "
    assert snp.load(data) == {}
    path = tmp_path / "e.safetensors"
    snp.save_file({"e": np.zeros((0,), np.float32), "f": np.zeros((3, 0, 2), np.int8)}, path)
    loaded = snp.load_file(path)
    assert loaded["e"].shape == (0,) and loaded["f"].shape == (3, 0, 2)


def test_non_contiguous_and_big_endian_inputs_are_converted():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    transposed = base.T
    big = np.arange(5, dtype=">i4")
    loaded = snp.load(snp.save({"t": transposed, "b": big}))
    np.testing.assert_array_equal(loaded["t"], transposed)
    np.testing.assert_array_equal(loaded["b"], big)
    assert loaded["b"].dtype == np.dtype("<i4")


def test_torch_round_trip_every_dtype(tmp_path):
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    dtypes = {"BOOL": torch.bool, "U8": torch.uint8, "I8": torch.int8, "I16": torch.int16,
              "F16": torch.float16, "BF16": torch.bfloat16, "I32": torch.int32,
              "F32": torch.float32, "C64": torch.complex64, "F64": torch.float64,
              "I64": torch.int64}
    generator = torch.Generator().manual_seed(0)
    tensors = {}
    for name, dtype in dtypes.items():
        if dtype == torch.bool:
            value = torch.rand(3, 4, generator=generator) > 0.5
        elif dtype.is_floating_point or dtype.is_complex:
            value = torch.randn(3, 4, generator=generator).to(dtype)
        else:
            value = torch.randint(-100 if dtype != torch.uint8 else 0, 100, (3, 4),
                                  generator=generator).to(dtype)
        tensors[name] = value
        tensors[name + ".scalar"] = value[1, 2].clone()
        tensors[name + ".empty"] = value[:0].clone()
    path = tmp_path / "t.safetensors"
    st.save_file(tensors, path, metadata={"format": "pt"})
    header = header_of(path.read_bytes())
    for name in dtypes:
        assert f'"{name}":{{"dtype":"{name}"' in header
    for loaded in (st.load_file(path), st.load(path.read_bytes())):
        assert set(loaded) == set(tensors)
        for key, value in tensors.items():
            assert loaded[key].dtype == value.dtype, key
            assert loaded[key].shape == value.shape, key
            assert torch.equal(loaded[key], value), key
    # file -> torch -> file, and the same tensors through numpy give the same bytes
    assert st.save(st.load_file(path), metadata={"format": "pt"}) == path.read_bytes()
    with stguard.safe_open(path, "pt") as f:
        assert f.metadata() == {"format": "pt"}
        assert f.get_tensor("BF16").dtype == torch.bfloat16


def test_torch_loads_types_it_lacks_as_raw_bits():
    torch = pytest.importorskip("torch")
    import stguard.torch as st

    path = CORPUS / "valid" / "every_dtype.safetensors"
    loaded = st.load_file(path)
    as_numpy = snp.load_file(path)
    assert loaded["t_bf16"].dtype == torch.bfloat16
    assert loaded["t_bf16"].view(torch.int16).numpy().view(np.uint16).tolist() == \
        as_numpy["t_bf16"].tolist()
    for key, dtype in (("t_u16", torch.int16), ("t_u32", torch.int32), ("t_u64", torch.int64)):
        if not hasattr(torch, "uint16"):
            assert loaded[key].dtype == dtype
        assert loaded[key].numpy().tobytes() == as_numpy[key].tobytes()
    for key in ("t_f6_e2m3", "t_f4", "t_f8_e8m0", "t_f8_e4m3fnuz"):
        assert loaded[key].dtype == torch.uint8
        assert loaded[key].numpy().tobytes() == as_numpy[key].tobytes()


def test_valid_shapes_numpy_cannot_hold_raise_safetensor_error(tmp_path):
    # Valid files (the reader accepts them), but numpy has no such array.
    too_big = '{"z":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}}'
    too_deep = '{"d":{"dtype":"U8","shape":[%s],"data_offsets":[0,1]}}' % ",".join(["1"] * 33)
    just_fits = '{"d":{"dtype":"U8","shape":[%s],"data_offsets":[0,1]}}' % ",".join(["1"] * 32)
    for header, name in ((too_big, "z"), (too_deep, "d")):
        data = struct.pack("<Q", len(header)) + header.encode() + (b"\x01" if name == "d" else b"")
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(data)
        with stguard.safe_open(path, "np") as f:
            assert f.get_slice(name).get_shape()
            with pytest.raises(stguard.SafetensorError) as raised:
                f.get_tensor(name)
            assert raised.value.code == "ValidationOverflow"
            with pytest.raises(stguard.SafetensorError):
                f.get_slice(name)[...]
        with pytest.raises(stguard.SafetensorError):
            snp.load(data)
    data = struct.pack("<Q", len(just_fits)) + just_fits.encode() + b"\x01"
    assert snp.load(data)["d"].shape == (1,) * 32

