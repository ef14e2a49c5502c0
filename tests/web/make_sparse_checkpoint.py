#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a PyTorch ZIP checkpoint of one F32 tensor of almost 2 GiB, {"w": zeros}, as a
sparse file: its storage record is a hole on disk, so it costs no disk space and no time
to write (torch.save would write every byte). data.pkl is torch.save's own for a small
tensor with the element count patched; the storage's CRC-32 is that of its zeros.
The browser test folder_2g_bin drops it in a folder. Usage: make_sparse_checkpoint.py OUT
"""

import io
import struct
import sys
import zipfile
import zlib

import torch

ELEMENTS = 2 ** 31 // 4 - 64  # 2 GiB less 256 bytes: the sizes fit the 32-bit fields
SMALL = 300  # pickled as BININT2 (b"M" and two bytes), as no other field of data.pkl is


def records():
    """torch.save's records for {"w": zeros(ELEMENTS)}, the storage's bytes left out."""
    small = io.BytesIO()
    torch.save({"w": torch.zeros(SMALL)}, small)
    with zipfile.ZipFile(small) as archive:
        out = [(info.filename, archive.read(info)) for info in archive.infolist()]
    small_count = b"M" + struct.pack("<H", SMALL)
    for i, (name, data) in enumerate(out):
        if name.endswith("/data.pkl"):
            assert data.count(small_count) == 2, "data.pkl names the element count twice"
            out[i] = (name, data.replace(small_count, b"J" + struct.pack("<i", ELEMENTS)))
    return out


def zeros_crc(size):
    crc = 0
    chunk = bytes(1 << 24)
    for _ in range(size // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    return zlib.crc32(bytes(size % len(chunk)), crc)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    size = ELEMENTS * 4
    with open(sys.argv[1], "wb") as f:
        central = []
        for name, data in records():
            storage = name.endswith("/data/0")
            length = size if storage else len(data)
            crc = zeros_crc(size) if storage else zlib.crc32(data)
            encoded = name.encode()
            offset = f.tell()
            # Data aligned to 64 bytes, as torch writes it (an extra field of padding).
            pad = (-(offset + 30 + len(encoded) + 4)) % 64
            extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, length,
                                length, len(encoded), len(extra)) + encoded + extra)
            if storage:
                f.seek(length, 1)  # a hole: the storage's zeros
            else:
                f.write(data)
            central.append((encoded, crc, length, offset))
        start = f.tell()
        for encoded, crc, length, offset in central:
            f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, crc,
                                length, length, len(encoded), 0, 0, 0, 0, 0, offset) + encoded)
        end = f.tell()
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central),
                            end - start, start, 0))


if __name__ == "__main__":
    main()
