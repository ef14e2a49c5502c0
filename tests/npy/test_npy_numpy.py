#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The .npy reader against numpy itself: every file numpy writes (np.save, and
numpy.lib.format.write_array at versions 1.0, 2.0 and 3.0) for every dtype stguard accepts
passes `stguard check` and `inspect --json` reports what numpy wrote; a hostile set is
refused quickly (exit 1). Exits 77 (ctest: skipped) when numpy is absent."""
import io
import json
import os
import subprocess
import sys
import tempfile
import time

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
          "|u1", "<u2", "<u4", ">u8", "|b1", "<c8", ">c8", "<c16", "<U5", "|S4",
          "<M8[s]", "<m8[ms]", "<M8", "<m8", "|V4", "<f16", "<c32"]
failures = []


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)


def sample(dtype, shape):
    count = int(np.prod(shape))
    kind = np.dtype(dtype).kind
    if kind == "b":
        values = np.arange(count) % 3 == 0
    elif kind in "US":
        values = np.array(["ab%d" % i for i in range(count)])
    elif kind in "Mm":
        values = np.arange(count).astype("int64")
        return values.view(np.dtype(dtype).newbyteorder("=")).astype(dtype).reshape(shape)
    elif kind == "V":
        raw = bytes(i % 251 for i in range(count * np.dtype(dtype).itemsize))
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    else:
        values = np.arange(count) - 2
    return values.astype(dtype).reshape(shape)


# Paths whose check verdict is asked for in batches (one `check --json` process for many
# files: under sanitizers a process start costs more than the check).
to_check = []


def check_batched():
    """Every path in to_check must be valid, judged by `check --json` many at a time."""
    for start in range(0, len(to_check), 400):
        batch = to_check[start:start + 400]
        result = run("check", "--json", *batch)
        verdicts = {}
        for line in result.stdout.splitlines():
            envelope = json.loads(line)
            verdicts[envelope["file"]] = envelope
        not_valid = ["refused %s: %s" % (path, verdicts.get(path) or result.stderr)
                     for path in batch
                     if verdicts.get(path, {}).get("verdict") != "valid"]
        failures.extend(not_valid)
        if not not_valid and result.returncode != 0:
            failures.append("check exit %d with every file valid" % result.returncode)
    to_check.clear()


def expect_accepted(path, array, version):
    to_check.append(path)
    result = run("inspect", "--json", path)
    if result.returncode != 0:
        failures.append("inspect refused %s: %s%s" % (path, result.stdout, result.stderr))
        return
    info = json.loads(result.stdout)
    expected = (np.dtype(array.dtype).str, list(array.shape), array.nbytes)
    got = (info["descr"], info["shape"], info["bytes"])
    if got != expected or (version and info["version"] != "%d.%d" % version):
        failures.append("inspect %s: %r != %r" % (path, got, expected))


def write_accepted(folder):
    n = 0
    for dtype in DTYPES:
        for shape in [(), (0,), (3,), (2, 3), (2, 1, 2)]:
            for fortran in (False, True):
                array = sample(dtype, shape)
                if fortran:
                    array = np.asfortranarray(array)
                path = os.path.join(folder, "save%d.npy" % n)
                np.save(path, array)
                expect_accepted(path, array, None)
                for version in [(1, 0), (2, 0), (3, 0)]:
                    path = os.path.join(folder, "write%d_%d.npy" % (n, version[0]))
                    with open(path, "wb") as f:
                        npformat.write_array(f, array, version=version)
                    expect_accepted(path, array, version)
                n += 1
    return n


def npy_bytes(header, data=b"", major=1):
    """A file with `header` (padded to 64 bytes with a final newline) and `data`."""
    prefix = 10 if major == 1 else 12
    text = header.encode("latin-1")
    text += b" " * ((-(prefix + len(text) + 1)) % 64) + b"\n"
    size = len(text).to_bytes(2 if major == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([major, 0]) + size + text + data


def hostile(folder):
    f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    buf = io.BytesIO()
    np.save(buf, np.array([1, "x", None], dtype=object), allow_pickle=True)
    cases = {
        "object": buf.getvalue(),
        "import": npy_bytes("{'descr': __import__('os').system('touch pwned'), "
                            "'fortran_order': False, 'shape': (2,), }", b"\0" * 8),
        "deep": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': " +
                          "(" * 9000 + "}", major=2),
        "huge_shape": npy_bytes("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (268435456,), }", b"\0" * 10),
        "trailing": npy_bytes(f4, b"\0" * 9),
        "truncated": npy_bytes(f4, b"\0" * 7),
        "duplicate": npy_bytes("{'descr': '<f4', 'descr': '<f8', "
                               "'fortran_order': False, 'shape': (2,), }", b"\0" * 8),
        "dtype_name": npy_bytes("{'descr': 'float32', 'fortran_order': False, "
                                "'shape': (2,), }", b"\0" * 8),
        "long": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }",
                          b"\0" * 8),
        "negative": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                              b"\0" * 8),
        # numpy refuses both ("array is too big", "Maximum allowed dimension exceeded").
        "too_big_beside_zero": npy_bytes("{'descr': '<u2', 'fortran_order': False, "
                                         "'shape': (0, 4611686018427387904), }"),
        "dim_over_intp": npy_bytes("{'descr': '|u1', 'fortran_order': False, "
                                   "'shape': (0, 9223372036854775808), }"),
        # numpy 1.x: "maximum supported dimension for an ndarray is 32" (numpy 2: 64).
        "dims_33": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                             "1, " * 33 + "), }", b"\0" * 4),
        # Items of 0 bytes: np.load still multiplies the shape in int64 and reshapes, so
        # 2**63 elements or more are refused ("negative dimensions are not allowed").
        "v0_dim_over_intp": npy_bytes("{'descr': '|V0', 'fortran_order': False, "
                                      "'shape': (9223372036854775808,), }"),
        "v0_count_over_intp": npy_bytes("{'descr': '|V0', 'fortran_order': False, "
                                        "'shape': (3037000500, 3037000500), }"),
        "structured": npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                "'shape': (2,), }", b"\0" * 8),
    }
    try:
        np.load(io.BytesIO(cases["dims_33"]))
        failures.append("numpy loaded a 33-dimension array: the rule names numpy 1.x")
    except ValueError:
        pass
    for name in ("v0_dim_over_intp", "v0_count_over_intp"):
        try:
            np.load(io.BytesIO(cases[name]))
            failures.append("numpy loaded %s: the rule names what np.load refuses" % name)
        except ValueError:
            pass
    # The largest V0 array np.load reads stays valid (3037000499**2 < 2**63).
    v0 = os.path.join(folder, "v0_largest.npy")
    with open(v0, "wb") as f:
        f.write(npy_bytes("{'descr': '|V0', 'fortran_order': False, "
                          "'shape': (3037000499, 3037000499), }"))
    expect_accepted(v0, np.load(v0), None)
    # 32 dimensions, as np.save writes them, stay valid.
    thirty_two = os.path.join(folder, "dims_32.npy")
    np.save(thirty_two, np.zeros((1,) * 32, dtype="<f4"))
    expect_accepted(thirty_two, np.zeros((1,) * 32, dtype="<f4"), None)
    for name, data in cases.items():
        path = os.path.join(folder, name + ".npy")
        with open(path, "wb") as f:
            f.write(data)
        start = time.monotonic()
        result = run("check", path)
        elapsed = time.monotonic() - start
        if result.returncode != 1:
            failures.append("hostile %s: exit %d %s" % (name, result.returncode, result.stdout))
        if elapsed > 5:
            failures.append("hostile %s took %.1f s" % (name, elapsed))
    if os.path.exists(os.path.join(folder, "pwned")) or os.path.exists("pwned"):
        failures.append("the header was evaluated")
    return len(cases)


SAFETENSORS_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "I16": "<i2",
                      "I32": "<i4", "I64": "<i8", "U8": "u1", "U16": "<u2", "U32": "<u4",
                      "U64": "<u8", "BOOL": "?", "C64": "<c8"}


def read_safetensors(path):
    """The one tensor of a safetensors file, read by hand: (name, array)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    (name, entry), = [(k, v) for k, v in header.items() if k != "__metadata__"]
    begin, end = entry["data_offsets"]
    data = blob[8 + n + begin:8 + n + end]
    array = np.frombuffer(data, dtype=SAFETENSORS_DTYPES[entry["dtype"]])
    return name, array.reshape(entry["shape"])


def convert(folder):
    """Every convertible dtype, both byte orders and both memory orders, converted and
    compared with np.load; the other types refused with exit 1 and no output."""
    n = 0
    for dtype in DTYPES:
        for shape in [(), (0,), (4,), (2, 3), (2, 3, 4)]:
            for fortran in (False, True):
                array = sample(dtype, shape)
                if fortran:
                    array = np.asfortranarray(array)
                path = os.path.join(folder, "weights.npy")
                out = os.path.join(folder, "out%d.safetensors" % n)
                np.save(path, array)
                n += 1
                result = run("convert", path, out)
                if np.dtype(dtype).kind in "USVMm" or dtype in ("<c16", "<f16", "<c32"):
                    # Refused, naming the descr numpy wrote.
                    if result.returncode != 1 or os.path.exists(out) or \
                            np.dtype(dtype).str not in result.stderr:
                        failures.append("convert %s: exit %d, output %s: %s" %
                                        (dtype, result.returncode, os.path.exists(out),
                                         result.stderr))
                    continue
                if result.returncode != 0:
                    failures.append("convert %s %s: %s" % (dtype, shape, result.stderr))
                    continue
                name, got = read_safetensors(out)
                expected = np.load(path)
                if (name != "weights" or got.shape != expected.shape or
                        not np.array_equal(got, expected)):
                    failures.append("convert %s %s fortran=%s: %r != %r" %
                                    (dtype, shape, fortran, got, expected))
    named = os.path.join(folder, "named.safetensors")
    np.save(path, np.arange(3, dtype="<f4"))
    result = run("convert", path, named, "--name", "emb")
    if result.returncode != 0 or read_safetensors(named)[0] != "emb":
        failures.append("convert --name: %s" % result.stderr)
    return n


with tempfile.TemporaryDirectory() as folder:
    accepted = write_accepted(folder)
    check_batched()
    refused = hostile(folder)
    check_batched()
    converted = convert(folder)
print("%d arrays x 4 writers checked, %d hostile files, %d conversions" %
      (accepted, refused, converted))
for failure in failures[:30]:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
