#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` of .npy and .npz files against numpy itself, for the conversion
path's own rules:
- Fortran-order arrays of rank 1 to 4 (sizes 0 and 1 included, and arrays large enough
  for several reordering bands and for rows wider than a band) convert to exactly
  np.ascontiguousarray's bytes, from a .npy, a stored .npz and a deflated .npz;
- `convert IN.npz --dtype D` gives numpy's astype(D) for every floating member and keeps
  the others as they are (a deflated Fortran-order member, converted as it is placed,
  gives the stored member's bytes); a --dtype that is not a target is exit 2, nothing
  written;
- a deflated member is inflated once: its stream and CRC-32 are checked as it is written,
  a failure in any member (the last one too) leaves no output, and converting costs about
  one inflate of CPU time, not two (compared with `check`, which inflates once).
Exits 77 (ctest: skipped) when numpy is absent."""
import io
import itertools
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import zipfile

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for %s: nothing to compare with" % sys.executable)
    sys.exit(77)

CLI = os.environ.get("STGUARD_CLI")
if not CLI:
    print("STGUARD_CLI is not set")
    sys.exit(2)

NUMPY_OF = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "I16": "<i2",
            "I32": "<i4", "I64": "<i8", "U8": "u1", "U16": "<u2", "U32": "<u4",
            "U64": "<u8", "BOOL": "?", "C64": "<c8"}
failures = []


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)


def read_safetensors(path):
    """The tensors of a safetensors file as numpy arrays (BF16 as raw uint16)."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = NUMPY_OF.get(entry["dtype"], "<u2")
        tensors[name] = (entry["dtype"],
                         np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"]))
    return tensors


def convert(path, out, *options):
    """Converts `path`; the tensors written, or None (with a failure noted) on refusal."""
    result = run("convert", path, out, *options)
    if result.returncode != 0:
        failures.append("convert %s %s: exit %d %s" % (os.path.basename(path), options,
                                                       result.returncode, result.stderr))
        return None
    tensors = read_safetensors(out)
    os.remove(out)
    return tensors


def expect_same(what, got, want):
    want = np.ascontiguousarray(want)
    little = want.astype(want.dtype.newbyteorder("<"))
    if got.shape != want.shape or got.tobytes() != little.tobytes():
        failures.append("%s: shape %s, want %s, or values differ" % (what, got.shape,
                                                                      want.shape))


FORTRAN_SHAPES = [(6,), (0,), (1,), (3, 4), (1, 5), (5, 1), (0, 3), (2, 3, 4), (4, 1, 3),
                  (1, 1, 1), (3, 0, 2), (2, 3, 4, 5), (1, 4, 1, 3), (3, 2, 1, 2),
                  (2, 0, 2, 2), (5, 7, 3, 2)]
FORTRAN_DTYPES = ["<f4", ">f8", "<i2", ">i4", "|u1", "|b1", ">c8"]


def fortran_cases():
    rng = np.random.default_rng(7)
    for shape in FORTRAN_SHAPES:
        for dtype in FORTRAN_DTYPES:
            values = rng.standard_normal(int(np.prod(shape))) * 100
            yield "%s %s" % (dtype, shape), np.asfortranarray(values.astype(dtype).reshape(shape))
    # Several 4 MiB bands of whole rows (1500 rows of 4 KiB), a 3-D one, and rows of 6 MiB
    # (a band of a cache line's worth of rows).
    yield "bands 2-D", np.asfortranarray(rng.standard_normal((1500, 1024)).astype("<f4"))
    yield "bands 3-D", np.asfortranarray(rng.standard_normal((1100, 32, 33)).astype(">f4"))
    yield "6 MiB rows", np.asfortranarray(rng.standard_normal((9, 3, 262144)).astype("<f8"))
    # Odd shapes across the transpose's tiles (32 to 128 elements a side, by element
    # size): partial tiles on both axes, runs shorter and longer than a tile, every rank.
    for dtype in ["|u1", "<i2", "<f4", "<f8"]:
        for shape in [(257, 131), (129, 3, 67), (7, 130, 2, 33), (1000, 1), (1, 1000)]:
            values = rng.standard_normal(int(np.prod(shape))) * 100
            yield "tiles %s %s" % (dtype, shape), np.asfortranarray(
                values.astype(dtype).reshape(shape))


def check_wide_rows(tmp):
    """Rows wider than the largest band (64 MiB) are gathered a piece at a time."""
    array = np.zeros((3, 2, (32 << 20) + 3), dtype="u1", order="F")
    array[:, :, ::4097] = np.random.default_rng(5).integers(0, 255, array[:, :, ::4097].shape)
    path = os.path.join(tmp, "wide.npy")
    np.save(path, array)
    got = convert(path, os.path.join(tmp, "out.safetensors"))
    if got is not None:
        expect_same("npy rows wider than a band", got["wide"][1], array)
    print("a Fortran-order array with 64 MiB rows converted as np.ascontiguousarray")


def check_fortran(tmp):
    out = os.path.join(tmp, "out.safetensors")
    count = 0
    for name, array in fortran_cases():
        npy = os.path.join(tmp, "f.npy")
        np.save(npy, array)
        got = convert(npy, out)
        if got is not None:
            expect_same("npy " + name, got["f"][1], array)
        for writer, kind in ((np.savez, "stored"), (np.savez_compressed, "deflated")):
            npz = os.path.join(tmp, "f.npz")
            writer(npz, f=array, t=array.T)
            got = convert(npz, out)
            if got is not None:
                expect_same("npz %s %s" % (kind, name), got["f"][1], array)
                expect_same("npz %s %s (transposed)" % (kind, name), got["t"][1], array.T)
        count += 1
    print("%d Fortran-order arrays (rank 1-4) converted as np.ascontiguousarray" % count)


def bf16_of(values):
    """Round-to-nearest-even of float32 values to bfloat16 bits (numpy has no bfloat16)."""
    bits = np.ascontiguousarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2")


def check_dtype(tmp):
    rng = np.random.default_rng(3)
    arrays = {"f8": rng.standard_normal((4, 5)) * 1e3, "f4": rng.standard_normal(7).astype("<f4"),
              "f2": rng.standard_normal((2, 3)).astype(">f2"),
              "ff": np.asfortranarray(rng.standard_normal((3, 4, 2)).astype(">f4")),
              "i8": np.arange(6, dtype="<i8"), "b1": np.array([True, False])}
    out = os.path.join(tmp, "out.safetensors")
    for writer in (np.savez, np.savez_compressed):
        npz = os.path.join(tmp, "d.npz")
        writer(npz, **arrays)
        for target, numpy_target in (("F16", "<f2"), ("F32", "<f4")):
            got = convert(npz, out, "--dtype", target)
            if got is None:
                continue
            for key, array in arrays.items():
                floating = array.dtype.kind == "f"
                want = array.astype(numpy_target) if floating else array
                dtype = got[key][0]
                kept = np.dtype(NUMPY_OF[dtype]) == array.dtype.newbyteorder("<")
                if dtype != target if floating else not kept:
                    failures.append("--dtype %s: %s became %s" % (target, key, dtype))
                expect_same("--dtype %s %s" % (target, key), got[key][1], want)
        # BF16 has no numpy type: F32 members are rounded to nearest even, as the npy path.
        got = convert(npz, out, "--dtype", "BF16")
        if got is not None:
            if got["f4"][0] != "BF16" or not np.array_equal(got["f4"][1], bf16_of(arrays["f4"])):
                failures.append("--dtype BF16: f4 is not float32 rounded to nearest even")
            expect_same("--dtype BF16 i8", got["i8"][1], arrays["i8"])
        for bad in ("I32", "F64", "Q4_0", "f16"):
            result = run("convert", npz, out, "--dtype", bad)
            refused = "must be one of BF16|F16|F32" in result.stderr
            if result.returncode != 2 or os.path.exists(out) or not refused:
                failures.append("--dtype %s: exit %d, %s" % (bad, result.returncode,
                                                             result.stderr.strip()))
    print("npz --dtype F16/F32/BF16 equal numpy's astype; non-targets refused (exit 2)")


def fortran_dtype_cases():
    """2-D and 3-D Fortran-order floating arrays of 2, 4 and 8-byte elements, both byte
    orders, across the transpose's tiles."""
    rng = np.random.default_rng(11)
    for dtype in ["<f2", ">f2", "<f4", ">f4", "<f8", ">f8"]:
        for shape in [(257, 131), (129, 3, 67), (1, 1000)]:
            values = rng.standard_normal(int(np.prod(shape))) * 1000
            yield np.asfortranarray(values.astype(dtype).reshape(shape))


def check_fortran_dtype(tmp):
    """`convert --dtype` of deflated Fortran-order members (converted as they are placed)
    gives the bytes of the same arrays as stored members (converted as they stream) and,
    to F16 and F32, numpy's astype. One archive holds every array both ways. Then a
    member whose slabs (d0 elements here) do not fit the placer's buffer with their
    conversion to F32 (6 bytes an element, 64 MiB): placed a column piece at a time."""
    arrays = list(fortran_dtype_cases())
    path = os.path.join(tmp, "fortran_dtype.npz")
    with zipfile.ZipFile(path, "w") as zf:
        for k, array in enumerate(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array)
            zf.writestr("s%d.npy" % k, buffer.getvalue(), compress_type=zipfile.ZIP_STORED)
            zf.writestr("d%d.npy" % k, buffer.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    out = os.path.join(tmp, "out.safetensors")
    for target, numpy_target in (("F16", "<f2"), ("F32", "<f4"), ("BF16", None)):
        got = convert(path, out, "--dtype", target)
        if got is None:
            continue
        for k, array in enumerate(arrays):
            what = "deflated Fortran %s %s --dtype %s" % (array.dtype.str, array.shape, target)
            stored, deflated = got["s%d" % k][1], got["d%d" % k][1]
            if deflated.shape != stored.shape or deflated.tobytes() != stored.tobytes():
                failures.append(what + ": differs from the stored member")
            if numpy_target:
                expect_same(what, deflated, array.astype(numpy_target))
    big = np.zeros(((11 << 20) + 5, 2), dtype="<f2", order="F")
    big[::4097] = np.random.default_rng(12).standard_normal(big[::4097].shape)
    np.savez_compressed(path, big=big)
    got = convert(path, out, "--dtype", "F32")
    if got is not None:
        expect_same("deflated Fortran <f2 %s --dtype F32" % (big.shape,), got["big"][1],
                    big.astype("<f4"))
    print("%d deflated Fortran-order arrays with --dtype F16/F32/BF16 equal the stored "
          "members and numpy's astype" % (len(arrays) + 1))


def zip_bytes(members, compression):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, array in members:
            with zf.open(name, "w") as f:
                np.lib.format.write_array(f, array)
    return bytearray(buffer.getvalue())


def late_failures(good):
    """Two damaged copies of the archive `good`: the last member's CRC-32 changed (in its
    local and central headers), and its DEFLATE stream changed near its end."""
    bad_crc = bytearray(good)
    for signature, offset in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
        at = good.rfind(signature) + offset  # the last member's CRC, in both headers
        bad_crc[at] ^= 0x40
    damaged = bytearray(good)
    central = good.find(b"PK\x01\x02")
    damaged[central - 40] ^= 0xFF  # near the end of the last member's stream
    return bad_crc, damaged


def check_late_failures(tmp):
    """Failures found only by inflating a member whole leave no output: a bad CRC-32 in
    the last member, and a DEFLATE stream damaged after the member's .npy header."""
    first = np.arange(100_000, dtype="<f4")
    last = np.linspace(0, 1, 200_000, dtype="<f8")
    good = zip_bytes([("a.npy", first), ("b.npy", last)], zipfile.ZIP_DEFLATED)
    bad_crc, damaged = late_failures(good)
    out = os.path.join(tmp, "late.safetensors")
    path = os.path.join(tmp, "late.npz")
    for name, data, refused in (("valid", good, False), ("bad CRC in the last member", bad_crc,
                                                         True),
                                ("stream damaged after the header", damaged, True)):
        with open(path, "wb") as f:
            f.write(data)
        result = run("convert", path, out)
        wrote = os.path.exists(out)
        if refused and (result.returncode != 1 or wrote):
            failures.append("%s: convert exit %d, output %s" % (name, result.returncode,
                                                                "left" if wrote else "none"))
        if not refused and (result.returncode != 0 or not wrote):
            failures.append("%s: convert exit %d %s" % (name, result.returncode, result.stderr))
        if wrote:
            os.remove(out)
    print("a member failing its CRC-32 or its stream after the header: no output")


def check_fortran_failures(tmp):
    """A deflated Fortran-order member is placed into the output file as it inflates: a
    bad CRC-32, a damaged stream or a member cut short still leaves no output (and an
    existing OUT untouched, no temporary file), with --dtype too (converted as placed),
    and `-` as OUT gives the same bytes as a file."""
    rng = np.random.default_rng(9)
    members = [("f.npy", np.asfortranarray(rng.integers(0, 255, (300, 200), dtype="u1"))),
               ("g.npy", np.asfortranarray(rng.standard_normal((40, 30, 20)).astype(">f4")))]
    good = zip_bytes(members, zipfile.ZIP_DEFLATED)
    bad_crc, damaged = late_failures(good)
    # The first member's stream cut after half its data: its compressed size and the
    # offsets after it are rewritten, so that only the stream is short.
    info = zipfile.ZipFile(io.BytesIO(bytes(good))).infolist()[0]
    name_len, extra_len = struct.unpack("<HH", good[info.header_offset + 26:
                                                    info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    stream = bytes(good[start:start + info.compress_size])
    short_stream = stream[:len(stream) // 2]
    cut = good[:start] + short_stream + good[start + info.compress_size:]
    cut = bytearray(cut)
    at = info.header_offset + 18  # the local header's compressed size
    cut[at:at + 4] = struct.pack("<I", len(short_stream))
    delta = len(stream) - len(short_stream)
    central = cut.find(b"PK\x01\x02")
    for entry in range(len(members)):
        if entry == 0:
            cut[central + 20:central + 24] = struct.pack("<I", len(short_stream))
        else:
            (offset,) = struct.unpack("<I", cut[central + 42:central + 46])
            cut[central + 42:central + 46] = struct.pack("<I", offset - delta)
        name_len, extra_len, comment_len = struct.unpack("<HHH", cut[central + 28:central + 34])
        central += 46 + name_len + extra_len + comment_len
    end = cut.rfind(b"PK\x05\x06")
    (dir_offset,) = struct.unpack("<I", cut[end + 16:end + 20])
    cut[end + 16:end + 20] = struct.pack("<I", dir_offset - delta)
    path = os.path.join(tmp, "placed.npz")
    out = os.path.join(tmp, "placed.safetensors")
    with open(path, "wb") as f:
        f.write(good)
    got = convert(path, out)
    if got is not None:
        for name, array in members:
            expect_same("placed " + name, got[name[:-4]][1], array)
    result = subprocess.run([CLI, "convert", path, out], capture_output=True, timeout=300)
    piped = subprocess.run([CLI, "convert", path, "-"], capture_output=True, timeout=300)
    with open(out, "rb") as f:
        if piped.returncode != 0 or result.returncode != 0 or piped.stdout != f.read():
            failures.append("placed members to `-`: exit %d, bytes differ from the file's"
                            % piped.returncode)
    for (name, data), options in itertools.product(
            (("bad CRC in a Fortran member", bad_crc),
             ("Fortran member's stream damaged", damaged),
             ("Fortran member's stream cut short", cut)), ((), ("--dtype", "F16"))):
        name += " " + " ".join(options)
        with open(path, "wb") as f:
            f.write(data)
        with open(out, "wb") as f:
            f.write(b"old")
        result = run("convert", path, out, *options)
        with open(out, "rb") as f:
            kept = f.read() == b"old"
        piped = subprocess.run([CLI, "convert", path, "-", *options], capture_output=True,
                               timeout=300)
        if result.returncode != 1 or not kept or not result.stderr.strip():
            failures.append("%s: convert exit %d, OUT %s" % (name, result.returncode,
                                                             "kept" if kept else "replaced"))
        if piped.returncode != 1 or piped.stdout:
            failures.append("%s: convert to - exit %d, %d bytes out" % (
                name, piped.returncode, len(piped.stdout)))
        os.remove(out)
    leftovers = [name for name in os.listdir(tmp) if name.endswith(".tmp")]
    if leftovers:
        failures.append("temporary files left: %s" % leftovers)
    print("deflated Fortran-order members placed in the output; failures leave no output")


def child_cpu(*args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        failures.append("%s: exit %d %s" % (args, result.returncode, result.stderr))
    return after.ru_utime - before.ru_utime


def check_single_inflate(tmp):
    """Converting a deflated .npz costs about what checking it costs (one inflate), not
    twice that: user CPU time, the best of three runs each (robust to other load)."""
    rng = np.random.default_rng(0)
    half = 4 << 20
    array = np.concatenate([rng.standard_normal(half, dtype=np.float32),
                            np.linspace(0, 1, half, dtype=np.float32)])
    path = os.path.join(tmp, "single.npz")
    np.savez_compressed(path, a=array)
    out = os.path.join(tmp, "single.safetensors")
    check = min(child_cpu("check", path) for _ in range(3))
    convert_cpu = min(child_cpu("convert", path, out) for _ in range(3))
    os.remove(out)
    ratio = convert_cpu / max(check, 1e-3)
    print("user CPU: check %.3f s, convert %.3f s (%.2fx; two inflates would be ~2x)" % (
        check, convert_cpu, ratio))
    if check > 0.05 and ratio > 1.6:
        failures.append("convert took %.2fx check's CPU: members inflated more than once"
                        % ratio)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_fortran(tmp)
        check_wide_rows(tmp)
        check_dtype(tmp)
        check_fortran_dtype(tmp)
        check_late_failures(tmp)
        check_fortran_failures(tmp)
        check_single_inflate(tmp)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
