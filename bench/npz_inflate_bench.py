#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""CPU of `stguard check` on np.savez_compressed archives against the anchors in the same
run: Python's zlib (zlib.decompress of each member's raw DEFLATE stream plus zlib.crc32 of
its output) and, when libdeflate.so.0 loads, libdeflate's whole-buffer decompressor plus
its CRC-32 (through ctypes; a benchmark line only, never linked into stguard).

One archive per member shape (random float32, zeros, text-like bytes), MEMBERS members of
MIB MiB each. Each round runs every measurement once, the order rotating; a figure is the
median (min-max) of the rounds' user+system seconds. stguard is timed as a whole process
(start-up, ZIP and .npy checks, inflate, CRC-32); the anchors time only their decode and
CRC loop inside a child (getrusage around it), so the ratio is strict against stguard.

  npz_inflate_bench.py [--rounds 7] [--members 8] [--mib 16] [--folder DIR]
                       LABEL=STGUARD_BINARY...
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys

_MAKE = r"""
import sys
import numpy as np
folder, shape, members, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) // 4
rng = np.random.default_rng(7)
words = ("the of and to in is that for it as was with be by on not he this are or his from "
         "at which but have an they you were her she there been one all we their has would "
         "when if model weight layer tensor").encode().split()
def member(i):
    if shape == "random":
        return rng.standard_normal(n).astype(np.float32)
    if shape == "zeros":
        return np.zeros(n, np.float32)
    text = b" ".join(words[j] for j in rng.integers(0, len(words), n // 2))[: 4 * n]
    return np.frombuffer(text.ljust(4 * n, b" "), np.float32)
np.savez_compressed(f"{folder}/{shape}.npz", **{f"m{i}": member(i) for i in range(members)})
"""

# The anchors: each member's raw stream (found through its local header), decoded whole,
# and its CRC-32; prints the user+system seconds of that loop alone.
_ANCHOR = r"""
import ctypes, resource, struct, sys, zipfile, zlib
path, which = sys.argv[1], sys.argv[2]
streams = []
with open(path, "rb") as f, zipfile.ZipFile(path) as z:
    for info in z.infolist():
        f.seek(info.header_offset)
        head = f.read(30)
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        streams.append((f.read(info.compress_size), info.file_size, info.CRC))
if which == "libdeflate":
    lib = ctypes.CDLL("libdeflate.so.0")
    lib.libdeflate_alloc_decompressor.restype = ctypes.c_void_p
    lib.libdeflate_deflate_decompress.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.libdeflate_crc32.restype = ctypes.c_uint32
    lib.libdeflate_crc32.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
    d = lib.libdeflate_alloc_decompressor()
    buffers = [ctypes.create_string_buffer(size) for _, size, _ in streams]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start = cpu()
for k, (raw, size, crc) in enumerate(streams):
    if which == "zlib":
        out = zlib.decompress(raw, -15, size)
        ok = len(out) == size and zlib.crc32(out) == crc
    else:
        b = buffers[k]
        ok = (lib.libdeflate_deflate_decompress(d, raw, len(raw), b, size, None) == 0 and
              lib.libdeflate_crc32(0, b, size) == crc)
    if not ok:
        sys.exit("anchor: bad member")
print(cpu() - start)
"""


def stguard_cpu(binary, path):
    proc = subprocess.Popen([binary, "check", path], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit(f"{binary} check {path} failed (status {status})")
    return usage.ru_utime + usage.ru_stime


def anchor_cpu(which, path):
    out = subprocess.run([sys.executable, "-c", _ANCHOR, path, which], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def libdeflate_loads():
    probe = "import ctypes; ctypes.CDLL('libdeflate.so.0')"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def cell(values):
    values = sorted(values)
    return f"{statistics.median(values):.3f} ({values[0]:.3f}-{values[-1]:.3f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--folder", default="/tmp/stguard_npz_inflate_bench")
    parser.add_argument("builds", nargs="+", help="LABEL=STGUARD_BINARY")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    os.makedirs(args.folder, exist_ok=True)
    shapes = ["random", "zeros", "text"]
    for shape in shapes:  # made once; delete the folder after changing --members or --mib
        if not os.path.exists(os.path.join(args.folder, f"{shape}.npz")):
            subprocess.run([sys.executable, "-c", _MAKE, args.folder, shape, str(args.members),
                            str(args.mib << 20)], check=True)
    anchors = ["zlib"] + (["libdeflate"] if libdeflate_loads() else [])
    jobs = [(label, lambda p, b=binary: stguard_cpu(b, p)) for label, binary in builds]
    jobs += [(a, lambda p, a=a: anchor_cpu(a, p)) for a in anchors]
    runs = {(shape, label): [] for shape in shapes for label, _ in jobs}
    for shape in shapes:
        path = os.path.join(args.folder, f"{shape}.npz")
        for _, run in jobs:
            run(path)  # warm-up: page cache, loader
        for round_index in range(args.rounds):
            shift = round_index % len(jobs)
            for label, run in jobs[shift:] + jobs[:shift]:
                runs[(shape, label)].append(run(path))
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.machine()} {os.cpu_count()} cores, load average {load} at the end, "
          f"{args.rounds} rounds, {args.members} x {args.mib} MiB float32 members per archive")
    print()
    labels = [label for label, _ in jobs]
    print("| members | " + " | ".join(f"{label} CPU s" for label in labels) + " | " +
          " | ".join(f"{label} / zlib" for label, _ in builds) + " |")
    print("| --- |" + " ---: |" * (len(labels) + len(builds)))
    for shape in shapes:
        medians = {l: statistics.median(runs[(shape, l)]) for l in labels}
        ratios = [f"{medians[label] / medians['zlib']:.2f}x" for label, _ in builds]
        print(f"| {shape} | " + " | ".join(cell(runs[(shape, l)]) for l in labels) + " | " +
              " | ".join(ratios) + " |")
    print()
    print("user+system CPU seconds, median (min-max); stguard: the whole `check` process; "
          "anchors: their decode + CRC-32 loop only")


if __name__ == "__main__":
    main()
