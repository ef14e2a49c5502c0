# SPDX-License-Identifier: Apache-2.0
"""stguard.check on GGUF files: recognised by the magic, validated by the strict reader."""
import struct

import pytest

import stguard


def gguf_bytes(trailing=b""):
    """A GGUF v3 file with one u32 key and one 4x2 f32 tensor, laid out as ggml does."""
    def string(text):
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    out = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
    out += string("llama.context_length") + struct.pack("<II", 4, 4096)
    out += string("w") + struct.pack("<IQQIQ", 2, 4, 2, 0, 0)
    out += b"\0" * (-len(out) % 32)
    out += struct.pack("<8f", *range(8))
    return out + trailing


def test_check_accepts_a_valid_gguf(tmp_path):
    path = tmp_path / "model.bin"  # no .gguf extension: the magic decides
    path.write_bytes(gguf_bytes())
    result = stguard.check(path)
    assert result.ok, result.error
    assert result.tensors == 1
    assert result.header_size == 128  # 101 header bytes, padded to 32


def test_check_refuses_an_invalid_gguf_with_its_code(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_bytes(trailing=b"junk"))
    result = stguard.check(path)
    assert not result.ok
    assert result.error.code == "GgufTrailingBytes"


def string(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def gguf_one_tensor(ne=(4, 2), key=b"llama.context_length", value=None, pad_last=True):
    """A GGUF v3 file: one key (a u32, or the string `value`), one f32 tensor of dims `ne`
    (ggml order), its data padded to 32 unless pad_last is False."""
    kv = string(key) + (struct.pack("<II", 4, 4096) if value is None
                        else struct.pack("<I", 8) + string(value))
    info = string("w") + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
    info += struct.pack("<IQ", 0, 0)
    out = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + kv + info
    out += b"\0" * (-len(out) % 32)
    count = 1
    for n in ne:
        count *= n
    count = count if count < 1 << 20 else 0  # an overflowing ne: no data follows
    data = struct.pack(f"<{count}f", *range(count))
    return out + data + (b"\0" * (-len(data) % 32) if pad_last else b"")


@pytest.mark.parametrize("kwargs, code", [
    # llama.cpp reads C strings: "a\0x" and "a\0y" are one token to it.
    ({"value": b"a\0x"}, "GgufNulInString"),
    ({"key": b"general\0.name"}, "GgufNulInString"),
    # ggml built from llama.cpp in July 2026: SIGFPE on a zero in ne[1..3].
    ({"ne": (32, 0)}, "GgufInvalidDims"),
    ({"ne": (2, 3, 0)}, "GgufInvalidDims"),
    # gguf-py 0.19 refuses; ggml npm 3.21.1 wraps the element count to 0.
    ({"ne": (1 << 40, 1 << 40, 0)}, "ValidationOverflow"),
    ({"ne": (0, 1 << 40, 1 << 40)}, "ValidationOverflow"),
    # ggml's full load (no_alloc = false) reads every tensor's padded size.
    ({"ne": (3,), "pad_last": False}, "GgufMissingPadding"),
])
def test_check_refuses_what_llama_cpp_reads_otherwise(tmp_path, kwargs, code):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_one_tensor(**kwargs))
    result = stguard.check(path)
    assert not result.ok
    assert result.error.code == code


@pytest.mark.parametrize("kwargs", [
    {}, {"value": b"ax"}, {"ne": (0, 32)}, {"ne": (0, 1 << 31, (1 << 31) - 1)},
    {"ne": (3,)}, {"ne": (8,), "pad_last": False},  # 32 bytes: no padding to add
])
def test_check_accepts_the_controls(tmp_path, kwargs):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_one_tensor(**kwargs))
    result = stguard.check(path)
    assert result.ok, result.error
