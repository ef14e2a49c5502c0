# SPDX-License-Identifier: Apache-2.0
"""stguard.check on GGUF files: recognised by the magic, validated by the strict reader."""
import struct

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
