#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of stguard's DEFLATE decoder against Python's zlib.

Thousands of raw DEFLATE streams (zlib's own output at every level and strategy, hand-made
edge cases, and those streams with bits flipped, bytes cut, bytes appended, or plain
random bytes) go to both decoders. zlib's verdict is "valid" when decompressobj(-15)
reaches the end of the stream with no byte left over; stguard's (tests/npz/inflate_tool)
must agree on every case, and on the output's length and CRC-32 when valid.
Usage: test_inflate_zlib.py INFLATE_TOOL [CASES]
"""
import os
import random
import struct
import subprocess
import sys
import zlib


def zlib_verdict(data):
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(data)
        out += d.flush()
    except zlib.error:
        return None
    if not d.eof or d.unused_data:
        return None
    return out


def compress(data, level, strategy, mem_level=8):
    c = zlib.compressobj(level, zlib.DEFLATED, -15, mem_level, strategy)
    return c.compress(data) + c.flush()


def sample_payloads(rng):
    yield b""
    yield b"a"
    yield bytes(70000)
    yield b"abc" * 30000
    yield os.urandom(1000)
    yield os.urandom(100000)
    for _ in range(40):
        n = rng.choice([1, 5, 100, 3000, 40000, 70000])
        alphabet = rng.choice([b"ab", b"abcdefgh", bytes(range(256))])
        yield bytes(rng.choice(alphabet) for _ in range(n))


def hand_made():
    """Streams that exercise zlib's rules one by one."""
    yield bytes([0x03, 0x00])                    # fixed block, end-of-block only
    yield bytes([0x01, 0x00, 0x00, 0xFF, 0xFF])  # stored, empty
    yield bytes([0x01, 0x00, 0x00, 0xFF, 0xFE])  # stored, NLEN wrong
    yield bytes([0x01, 0x01, 0x00, 0xFE, 0xFF, 0x41])  # stored "A"
    yield bytes([0x07])                          # block type 3
    yield bytes([0x01, 0x05, 0x00, 0xFA, 0xFF, 0x41])  # stored, truncated
    yield bytes([0x03, 0x00, 0x00])              # trailing byte
    yield bytes([0x00, 0x00, 0x00, 0xFF, 0xFF])  # not final, then nothing
    # Fixed block: literal 'a' then a distance too far back (length 3, distance 2).
    yield bytes([0x4B, 0x04, 0x02, 0x00])
    yield bytes([0x4B, 0x04, 0x00])              # 'a' then a distance-1 copy of 3


def mutate(rng, data):
    data = bytearray(data)
    choice = rng.randrange(5)
    if choice == 0 and data:
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif choice == 1 and data:
        del data[rng.randrange(len(data)):]
    elif choice == 2:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    elif choice == 3 and data:
        i = rng.randrange(len(data))
        data[i] = rng.randrange(256)
    else:
        data = bytearray(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return bytes(data)


def cases(count, rng):
    out = list(hand_made())
    valid = []
    for payload in sample_payloads(rng):
        for level in (0, 1, 6, 9):
            for strategy in (zlib.Z_DEFAULT_STRATEGY, zlib.Z_FILTERED, zlib.Z_HUFFMAN_ONLY,
                             zlib.Z_RLE, zlib.Z_FIXED):
                if rng.random() < 0.3 or len(payload) < 1000:
                    valid.append(compress(payload, level, strategy, rng.randint(1, 9)))
    out += valid
    small = [v for v in valid if len(v) < 4000] or valid
    while len(out) < count:
        out.append(mutate(rng, rng.choice(small)))
    return out


def main():
    tool = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rng = random.Random(20261203)
    inputs = cases(count, rng)
    stdin = b"".join(struct.pack("<I", len(c)) + c for c in inputs)
    result = subprocess.run([tool], input=stdin, capture_output=True, check=True)
    lines = result.stdout.decode().splitlines()
    assert len(lines) == len(inputs), (len(lines), len(inputs))
    mismatches = 0
    valid = 0
    for data, line in zip(inputs, lines):
        expected = zlib_verdict(data)
        if expected is None:
            ok = line.startswith("error ")
        else:
            valid += 1
            ok = line == "ok %d %d" % (len(expected), zlib.crc32(expected))
        if not ok:
            mismatches += 1
            if mismatches <= 10:
                print("MISMATCH zlib=%s stguard=%s input=%s" % (
                    "invalid" if expected is None else "valid %d" % len(expected), line,
                    data[:64].hex()))
    print("%d streams (%d valid for zlib), %d mismatches" % (len(inputs), valid, mismatches))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
