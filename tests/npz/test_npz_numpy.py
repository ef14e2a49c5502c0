#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The .npz reader against numpy itself: archives written by np.savez and
np.savez_compressed (members of every dtype stguard accepts, .npy versions 1.0, 2.0 and
3.0 written with numpy.lib.format.write_array into zipfile, C and Fortran order) pass
`stguard check`, `inspect --json` reports what numpy wrote, and `convert` gives exactly
np.load's values (or refuses, writing nothing, the types safetensors lacks). A hostile set
(object arrays, bad CRCs, traversal names, duplicates, bzip2/LZMA, bytes before or after,
zip bombs, members numpy itself refuses) is refused quickly, in bounded memory.
Exits 77 (ctest: skipped) when numpy is absent."""
import io
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

try:
    import numpy as np
    from numpy.lib import format as npformat
except ImportError:
    print("SKIP: numpy is not installed for %s: nothing to compare with" % sys.executable)
    sys.exit(77)

CLI = os.environ.get("STGUARD_CLI")
if not CLI:
    print("STGUARD_CLI is not set")
    sys.exit(2)

DTYPES = ["<f2", "<f4", ">f4", "<f8", ">f8", "|i1", "<i2", ">i2", "<i4", "<i8", ">i8",
          "|u1", "<u2", ">u4", "<u8", "|b1", "<c8", ">c8", "<c16", "<U5", "|S4",
          "<M8[s]", "<m8[ms]", "<M8", "<m8", "|V4", "<f16", "<c32"]
SAFETENSORS = {"f2": "F16", "f4": "F32", "f8": "F64", "i1": "I8", "i2": "I16", "i4": "I32",
               "i8": "I64", "u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64", "b1": "BOOL",
               "c8": "C64"}
# Address space for `check` on hostile files; none under sanitizers (see tests/CMakeLists.txt).
MEMORY_LIMIT = None if os.environ.get("STGUARD_NO_ADDRESS_LIMIT") else 512 << 20
failures = []


def run(*args, limit=None):
    def cap():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60,
                          preexec_fn=cap)


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    kind = np.dtype(dtype).kind
    if kind == "b":
        values = rng.integers(0, 2, count) == 1
    elif kind in "US":
        values = np.array(["k%d" % i for i in range(count)])
    elif kind in "Mm":
        return rng.integers(0, 1 << 40, count).astype("int64").astype(dtype).reshape(shape)
    elif kind == "V":
        raw = rng.bytes(count * np.dtype(dtype).itemsize)
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    elif kind == "f" or kind == "c":
        values = rng.standard_normal(count) * 100
    else:
        values = rng.integers(0, 100, count)
    return values.astype(dtype).reshape(shape)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return header, data


def compare_conversion(path, loaded, tmp):
    out = os.path.join(tmp, "out.safetensors")
    if os.path.exists(out):
        os.remove(out)
    result = run("convert", path, out)
    convertible = all(np.dtype(a.dtype).str[1:] in SAFETENSORS for a in loaded.values())
    if not convertible:
        if result.returncode != 1 or os.path.exists(out):
            failures.append("convert of %s (a type safetensors lacks) gave %d%s" % (
                path, result.returncode, ", and wrote a file" if os.path.exists(out) else ""))
        return
    if result.returncode != 0:
        failures.append("convert refused %s: %s" % (path, result.stderr))
        return
    header, data = read_safetensors(out)
    if sorted(header) != sorted(loaded):
        failures.append("%s: tensors %s, numpy keys %s" % (path, sorted(header), sorted(loaded)))
        return
    for key, array in loaded.items():
        entry = header[key]
        want = SAFETENSORS[np.dtype(array.dtype).str[1:]]
        begin, end = entry["data_offsets"]
        got = np.frombuffer(data[begin:end], dtype=np.dtype(array.dtype).newbyteorder("<"))
        got = got.reshape(entry["shape"])
        if entry["dtype"] != want or list(array.shape) != entry["shape"] or \
                not np.array_equal(got, array.astype(got.dtype), equal_nan=True):
            failures.append("%s: tensor %s differs from np.load's" % (path, key))


def expect_accepted(path, tmp):
    result = run("check", path)
    if result.returncode != 0:
        failures.append("refused %s: %s%s" % (path, result.stdout, result.stderr))
        return
    with np.load(path, allow_pickle=False) as npz:
        loaded = {k: npz[k] for k in npz.files}
    info = json.loads(run("inspect", "--json", path).stdout)
    got = {a["name"]: (a["descr"], a["shape"], a["fortran_order"], a["bytes"])
           for a in info["arrays"]}
    want = {k: (np.dtype(a.dtype).str, list(a.shape),
                a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous, a.nbytes)
            for k, a in loaded.items()}
    if got != want:
        failures.append("inspect %s: %s, numpy: %s" % (path, got, want))
    compare_conversion(path, loaded, tmp)


def write_versions(path, arrays, version, compression):
    """An .npz as np.savez writes it, each member at the given .npy version."""
    with zipfile.ZipFile(path, "w", compression=compression, allowZip64=True) as zf:
        for key, array in arrays.items():
            with zf.open(key + ".npy", "w", force_zip64=True) as f:
                npformat.write_array(f, array, version=version, allow_pickle=False)


def accepted_set(tmp):
    count = 0
    shapes = [(), (0,), (5,), (3, 4), (2, 3, 4)]
    for seed, dtype in enumerate(DTYPES):
        arrays = {}
        for i, shape in enumerate(shapes):
            array = sample(dtype, shape, seed * 10 + i)
            arrays["a%d" % i] = array
            if len(shape) > 1:
                arrays["f%d" % i] = np.asfortranarray(array)
        for writer in (np.savez, np.savez_compressed):
            path = os.path.join(tmp, "w.npz")
            writer(path, **arrays)
            expect_accepted(path, tmp)
            count += 1
        for version in ((1, 0), (2, 0), (3, 0)):
            for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                path = os.path.join(tmp, "v.npz")
                write_versions(path, arrays, version, compression)
                expect_accepted(path, tmp)
                count += 1
    # A large compressed member (several 64 KiB chunks, many deflate blocks).
    path = os.path.join(tmp, "large.npz")
    big = np.random.default_rng(1).standard_normal((600, 700)).astype("<f4")
    np.savez_compressed(path, big=big, fbig=np.asfortranarray(big.astype(">f8")),
                        zeros=np.zeros(3_000_000))
    expect_accepted(path, tmp)
    return count + 1 + names_and_keys_accepted(tmp)


def names_and_keys_accepted(tmp):
    """Archives numpy writes whose names or keys are unusual, each accepted with numpy's
    keys: no array at all, non-ASCII keys (zipfile flags them UTF-8), a key ending in
    ".npy", and keys whose member names look alike without answering to one key."""
    a, b = np.arange(3, dtype="<f4"), np.arange(4, dtype="<i8")
    cases = [{}, {"\u00e9": a, "\u00fc\u00df": b}, {"x.npy": b}, {"x": a, "x.npy.npy": b},
             {"x.npy": a, "x.npy.npy.npy": b}]
    for arrays in cases:
        for writer in (np.savez, np.savez_compressed):
            path = os.path.join(tmp, "keys.npz")
            writer(path, **arrays)
            with np.load(path) as npz:
                if sorted(npz.files) != sorted(arrays) or any(
                        not np.array_equal(npz[k], v) for k, v in arrays.items()):
                    failures.append("numpy reads %r otherwise than written" % list(arrays))
            expect_accepted(path, tmp)
    return 2 * len(cases)


def zip_with(members, compression=zipfile.ZIP_STORED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


def npy_bytes(array, **kwargs):
    buffer = io.BytesIO()
    npformat.write_array(buffer, array, **kwargs)
    return buffer.getvalue()


def deflate_member_claiming(npy, claimed):
    """A stored-then-patched archive whose one deflated member declares `claimed` bytes."""
    raw = bytearray(zip_with([("x.npy", npy)], zipfile.ZIP_DEFLATED))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = raw.find(signature)
        raw[at + offset:at + offset + 4] = struct.pack("<I", claimed)
    return bytes(raw)


def patched(data, name, flags=None, local_flags=None, version=None, raw_name=None):
    """`data` (one zipfile archive) with the member `name` changed: its flags in both
    headers (or only the local one), its central "version needed", its name's first
    bytes (`raw_name`)."""
    raw = bytearray(data)
    encoded = name.encode("utf-8")
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.find(signature)
        while at >= 0:
            header = 30 if signature == b"PK\x03\x04" else 46
            if raw[at + header:at + header + len(encoded)] == encoded:
                break
            at = raw.find(signature, at + 1)
        assert at >= 0, name
        new_flags = local_flags if signature == b"PK\x03\x04" and local_flags is not None \
            else flags
        if new_flags is not None:
            raw[at + flag_at:at + flag_at + 2] = struct.pack("<H", new_flags)
        if version is not None and signature == b"PK\x01\x02":
            raw[at + 6:at + 8] = struct.pack("<H", version)
        if raw_name is not None:
            raw[at + header:at + header + len(raw_name)] = raw_name
    return bytes(raw)


def numpy_refuses(data, exceptions):
    try:
        with np.load(io.BytesIO(data)) as npz:
            for key in npz.files:
                npz[key]
    except exceptions:
        return True
    return False


def names_and_keys_hostile(good):
    """Archives whose keys numpy reads otherwise than their bytes say, each checked to be
    read so by numpy 1.24 and Python's zipfile before stguard is asked."""
    a, b = np.arange(3, dtype="<f4"), np.arange(4, dtype="<i8")
    buffer = io.BytesIO()
    np.savez(buffer, x=a, **{"x.npy": b})  # members x.npy and x.npy.npy
    collision = buffer.getvalue()
    with np.load(io.BytesIO(collision)) as npz:
        if npz.files != ["x", "x.npy"] or not np.array_equal(npz["x.npy"], a):
            failures.append("numpy 1.24 no longer answers key x.npy with member x.npy")
    accented = zip_with([("\u00e9.npy", good)])  # zipfile flags it UTF-8
    cases = {
        "two members answering key x.npy": collision,
        "the same, longer name first": zip_with([("x.npy.npy", good), ("x.npy", good)]),
        "a chain x.npy.npy(.npy)": zip_with([("x.npy.npy.npy", good), ("x.npy.npy", good)]),
        "non-ASCII name without the UTF-8 flag": patched(accented, "\u00e9.npy", flags=0),
        "cp437 byte 0x82 without the UTF-8 flag": patched(
            zip_with([("Q.npy", good)]), "Q.npy", raw_name=b"\x82"),
        "two names one after cp437 decoding": patched(
            zip_with([("\u00e9.npy", good), ("\u251c\u2310.npy", good)]), "\u00e9.npy",
            flags=0),
        "name flagged UTF-8 that is not UTF-8": patched(
            zip_with([("Q.npy", good)]), "Q.npy", flags=0x800, raw_name=b"\xff"),
        "local header without the central UTF-8 flag": patched(
            accented, "\u00e9.npy", local_flags=0),
        "version needed to extract above 6.3": patched(
            zip_with([("x.npy", good)]), "x.npy", version=64),
    }
    # What numpy does with each (the reason of each rule, in SECURITY.md).
    expect_numpy = {
        "cp437 byte 0x82 without the UTF-8 flag": None,  # loads, key "\u00e9"
        "name flagged UTF-8 that is not UTF-8": UnicodeDecodeError,
        "local header without the central UTF-8 flag": zipfile.BadZipFile,
        "version needed to extract above 6.3": NotImplementedError,
    }
    for name, exception in expect_numpy.items():
        if exception and not numpy_refuses(cases[name], exception):
            failures.append("numpy 1.24 no longer refuses %r" % name)
    with np.load(io.BytesIO(cases["two names one after cp437 decoding"])) as npz:
        if npz.files != ["\u251c\u2310", "\u251c\u2310"]:
            failures.append("zipfile no longer decodes unflagged names as cp437")
    return cases


def hostile_set():
    good = npy_bytes(np.arange(1000, dtype="<f4"))
    stored = zip_with([("x.npy", good)])
    bad_crc = bytearray(stored)
    bad_crc[stored.find(b"\x93NUMPY") + 200] ^= 1
    compressed = zip_with([("x.npy", good)], zipfile.ZIP_DEFLATED)
    bad_crc_deflated = bytearray(compressed)
    at = compressed.find(b"PK\x01\x02") + 16  # the central directory's CRC
    bad_crc_deflated[at] ^= 1
    local = compressed.find(b"PK\x03\x04") + 14
    bad_crc_deflated[local] ^= 1
    bomb_data = npy_bytes(np.zeros(50_000_000, dtype="u1"))
    cases = {
        "object array": zip_with([("x.npy", npy_bytes(np.array([1, None], dtype=object),
                                                      allow_pickle=True))]),
        "bad CRC (stored)": bytes(bad_crc),
        "bad CRC (deflated)": bytes(bad_crc_deflated),
        "traversal ../": zip_with([("../x.npy", good)]),
        "folder a/": zip_with([("a/x.npy", good)]),
        "leading /": zip_with([("/x.npy", good)]),
        "backslash": zip_with([("a\\x.npy", good)]),
        "not .npy": zip_with([("x.txt", good)]),
        "bare .npy": zip_with([(".npy", good)]),
        "bzip2": zip_with([("x.npy", good)], zipfile.ZIP_BZIP2),
        "lzma": zip_with([("x.npy", good)], zipfile.ZIP_LZMA),
        "bytes before": b"\0" * 16 + stored,
        "bytes after": stored + b"\0",
        "truncated": stored[:-30],
        "member numpy refuses": zip_with([("x.npy", good[:-1])]),
        "header with a call": zip_with([("x.npy", good.replace(b"'<f4'", b"f(1)"))]),
        "zip bomb beyond DEFLATE's ratio": deflate_member_claiming(good, 0xFFFFFFF0),
        "member inflating past its size": deflate_member_claiming(bomb_data, len(good)),
        "member inflating short of its size": deflate_member_claiming(good, len(good) + 1),
    }
    cases.update(names_and_keys_hostile(good))
    # Two members of one name (zipfile warns but writes both).
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases["duplicate name"] = zip_with([("x.npy", good), ("x.npy", good)])
    return cases


def main():
    with tempfile.TemporaryDirectory() as tmp:
        count = accepted_set(tmp)
        print("%d archives numpy wrote: checked, inspected, converted" % count)
        for name, data in hostile_set().items():
            path = os.path.join(tmp, "hostile.npz")
            with open(path, "wb") as f:
                f.write(data)
            out = os.path.join(tmp, "hostile.safetensors")
            start = time.monotonic()
            result = run("check", path, limit=MEMORY_LIMIT)
            elapsed = time.monotonic() - start
            converted = run("convert", path, out, limit=MEMORY_LIMIT)
            refused = ": invalid: " in result.stdout or ": refused: " in result.stdout
            if result.returncode != 1 or not refused:
                failures.append("hostile %r: check exit %d %s%s" % (
                    name, result.returncode, result.stdout, result.stderr))
            elif converted.returncode != 1 or os.path.exists(out):
                failures.append("hostile %r: convert exit %d" % (name, converted.returncode))
            elif elapsed > 5:
                failures.append("hostile %r: took %.1f s" % (name, elapsed))
            else:
                print("refused %-36s %s" % (name, (result.stdout + result.stderr).strip()[-110:]))
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
