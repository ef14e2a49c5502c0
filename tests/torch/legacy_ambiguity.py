# SPDX-License-Identifier: Apache-2.0
"""Legacy torch streams that torch.load reads differently from what they seem to be.

Built by hand (torch cannot write them), around a real torch.save body where one is needed.
Every payload only creates a marker file.

  tar_shaped_legacy(marker, checksum_delta=0)
      A legacy stream whose first 512 bytes also pass tarfile's header test. torch.load(path)
      tries tarfile.open first, finds a second member `storages` hidden in the main pickle's
      first key string, and unpickles it with plain pickle. checksum_delta != 0 spoils the
      tar checksum: then it is an ordinary legacy stream, which torch and stguard both read.

  long_frame_legacy(marker)
      A legacy stream whose system-information pickle has a FRAME reaching far past its
      STOP. torch's C unpickler reads a frame longer than its file buffer with one read(),
      so the next pickle.load starts at the frame's end, inside a tensor's bytes, where a
      second main pickle waits; stguard (and a reader that continues after STOP) sees the
      honest one.

  huge_memo_key_legacy()
      An ordinary legacy stream whose main pickle memoises under key 0xffffffff: torch's
      C unpickler sizes its memo array by the key and fails with MemoryError.

Run as a script it writes the three files (marker in /tmp) into the folder given.
"""
import io
import os
import pickle
import struct
import sys
import tarfile

import torch

MAGIC = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
FRAME = b"\x95"
MEMOIZE = b"\x94"
BLOCK = 512
# Number fields of the first tar header that must parse (tarfile.nti) for tarfile to open
# it: mode, uid, gid, size, mtime. A field that begins with NUL reads as 0.
NUMBER_FIELDS = (100, 108, 116, 124, 136)
CHECKSUM_AT = 148


def opener_pickle(marker):
    """A protocol-0 pickle that opens `marker` for writing (it creates the file)."""
    return ("cbuiltins\nopen\n(V%s\nVw\ntR." % marker).encode()


def legacy_body(state, protocol=2):
    """torch.save's legacy stream for `state`, split after the system information:
    (main pickle + storage keys + storages)."""
    buf = io.BytesIO()
    torch.save(state, buf, _use_new_zipfile_serialization=False, pickle_protocol=protocol)
    buf.seek(0)
    for _ in range(3):  # magic number, protocol version, system information
        pickle.load(buf)
    return buf.getvalue()[buf.tell():]


def strings(s):
    """A string's pickle encodings: SHORT_BINUNICODE, BINUNICODE (three NULs in its length)."""
    return [b"\x8c" + bytes([len(s)]) + s.encode(), b"X" + struct.pack("<I", len(s)) + s.encode()]


def ints(v):
    """A small int's encodings: BININT1 or BININT2, BININT (NULs in its four bytes)."""
    short = b"K" + bytes([v]) if v < 256 else b"M" + struct.pack("<H", v)
    return [short, b"J" + struct.pack("<i", v)]


def sysinfo_units():
    """The system information pickle as (encodings, whether MEMOIZE may come before)."""
    units = [[b"\x80\x02"], [b"}"]]
    for key, value in (("protocol_version", ints(1001)), ("little_endian", [b"\x88"])):
        units += [strings(key), value, [b"s"]]
    units += [strings("type_sizes"), [b"}"]]
    for key, value in (("short", 2), ("int", 4), ("long", 8)):
        units += [strings(key), ints(value), [b"s"]]
    units += [[b"s"], [b"."]]
    # MEMOIZE needs a value above the last MARK: anywhere after the dict is pushed.
    return [(u, k >= 2) for k, u in enumerate(units)]


def place(units, start, zeros_at, limit):
    """Lays `units` out from offset `start` to at most `limit`, inserting zero-length FRAMEs
    (one opcode and eight NULs) and MEMOIZEs (one byte, where allowed) so that every offset
    in `zeros_at` below the end holds a NUL. Each unit is a list of equivalent encodings.
    Returns the bytes, or None if no layout is found."""
    dead_ends = set()

    def search(k, at):
        if at > limit or (k, at) in dead_ends:
            return None
        if k == len(units):
            return b""
        for unit in units[k][0]:
            found = emit(k, at, unit)
            if found is not None:
                return found
        found = fill(k, at)
        if found is None:
            dead_ends.add((k, at))
        return found

    def emit(k, at, unit):
        end = at + len(unit)
        # Emitting the unit here is fine when it puts no opcode byte on a required NUL
        # (NUL bytes inside it count) and does not end exactly on one.
        clash = any(at <= r < end and unit[r - at] != 0 for r in zeros_at)
        if clash or end in zeros_at:
            return None
        rest = search(k + 1, end)
        return None if rest is None else unit + rest

    def fill(k, at):
        may_memoize = units[k][1]
        for filler, allowed in ((FRAME + bytes(8), True), (MEMOIZE, may_memoize)):
            if not allowed or any(r == at for r in zeros_at):
                continue
            if at + len(filler) in zeros_at:
                continue
            rest = search(k, at + len(filler))
            if rest is not None:
                return filler + rest
        return None
    return search(0, start)


def tar_shaped_legacy(marker, checksum_delta=0):
    version = b"\x80\x02M\xe9\x03."
    start = len(MAGIC) + len(version)
    # The main pickle as torch.save writes it for one tensor begins PROTO 2, EMPTY_DICT,
    # BINPUT 0, BINUNICODE <its key>; the key string then holds the rest of the first tar header,
    # the `storages` member and the end of the archive.
    payload = opener_pickle(marker)
    member = tarfile.TarInfo("storages")
    member.size = len(payload)
    storages = member.tobuf(tarfile.USTAR_FORMAT)
    padded = payload + bytes(-len(payload) % BLOCK)
    archive_tail = storages + padded + bytes(2 * BLOCK)
    main_units = [([b"\x80\x02"], False), ([b"}"], False), ([b"q\x00"], False),
                  ([b"X\xff\xff\x00\x00"], False)]  # key length patched below (< 64 KiB)
    head = place(sysinfo_units() + main_units, start, NUMBER_FIELDS, CHECKSUM_AT)
    assert head is not None, "no layout puts NULs on the tar number fields"
    prefix = MAGIC + version + head
    key_at = len(prefix)
    assert key_at <= CHECKSUM_AT, key_at
    key = bytearray(BLOCK - key_at) + archive_tail
    key[156 - key_at] = ord("0")  # typeflag: a regular file of size 0
    prefix = prefix[:-4] + struct.pack("<I", len(key))
    body = legacy_body({"A" * len(key): torch.arange(4.0)})
    first = b"\x80\x02}q\x00X" + struct.pack("<I", len(key)) + b"A" * len(key)
    assert body.startswith(first)
    block = bytearray(prefix + key[:BLOCK - key_at])
    checksum = 256 + sum(block[:CHECKSUM_AT]) + sum(block[CHECKSUM_AT + 8:])
    text = b"%06o\x00 " % (checksum + checksum_delta)
    key[CHECKSUM_AT - key_at:CHECKSUM_AT - key_at + 8] = text
    return prefix + bytes(key) + body[len(first):]


def long_frame_legacy(marker, frame_len=64 * 1024):
    """See the module docstring. The honest tensor is 32768 float32 zeros (128 KiB)."""
    body = bytearray(legacy_body({"w": torch.zeros(32768)}))
    version = b"\x80\x02M\xe9\x03."
    sysinfo = pickle.dumps({"protocol_version": 1001, "little_endian": True,
                            "type_sizes": {"short": 2, "int": 4, "long": 8}}, protocol=2)
    framed = sysinfo[:2] + FRAME + struct.pack("<Q", frame_len) + sysinfo[2:]
    frame_end = len(MAGIC) + len(version) + 11 + frame_len
    data_at = len(MAGIC) + len(version) + len(framed) + len(body) - 4 * 32768
    hidden = opener_pickle(marker) + b"\x80\x02]."  # a second main pickle, then no keys
    at = frame_end - (len(MAGIC) + len(version) + len(framed))
    assert data_at <= frame_end and at + len(hidden) <= len(body)
    body[at:at + len(hidden)] = hidden
    return MAGIC + version + framed + bytes(body)


def huge_memo_key_legacy():
    body = legacy_body({"w": torch.arange(4.0)})
    # torch's main pickle begins PROTO 2, EMPTY_DICT, BINPUT 0: make that LONG_BINPUT
    # 0xffffffff (nothing gets memo key 0 back: the small pickle never asks for it).
    assert body.startswith(b"\x80\x02}q\x00")
    main = b"\x80\x02}r\xff\xff\xff\xff" + body[5:]
    head = MAGIC + b"\x80\x02M\xe9\x03." + pickle.dumps(
        {"protocol_version": 1001, "little_endian": True,
         "type_sizes": {"short": 2, "int": 4, "long": 8}}, protocol=2)
    return head + main


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in (("tar_shaped.legacy.pt", tar_shaped_legacy("/tmp/stguard_tar_marker")),
                       ("long_frame.legacy.pt", long_frame_legacy("/tmp/stguard_frame_marker")),
                       ("huge_memo_key.legacy.pt", huge_memo_key_legacy())):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
