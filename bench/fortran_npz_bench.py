#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` of a deflated Fortran-order .npz member: time and peak memory, for
the same array as a deflated C-order member (the anchor) and, with --baseline, another
stguard on the Fortran one.

Usage: bench/fortran_npz_bench.py STGUARD_CLI [--mib N] [--rounds K] [--tmpdir DIR]
       [--baseline OLD_STGUARD_CLI] [--dtype BF16|F16|F32]
(default 1024 MiB per array, 7 rounds). Arrays: 2-D |u1 (the square nearest N MiB) and
3-D <f4 (64 planes), sparse (every 4099th element non-zero) so that they deflate to
little and are written here a slab at a time, never held whole. Each round runs every
tool once, the order rotating; a figure is the median over the rounds of the child's
wall time, CPU time (user + system) and peak RSS (GNU time's %M). The output goes to
--tmpdir (default /dev/shm when it exists); --dtype converts the float32 array on the
way (the uint8 one is kept as it is). Prints a table for bench/README.md; not a
timed test. tests/memory/test_npz_fortran_memory.py builds its member with
write_sparse_npz."""
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

from fortran_bench_common import parser, rotated, tools

EVERY = 4099
TIME = "/usr/bin/time"


def write_sparse_npz(path, shape, dtype, fortran, every=EVERY):
    """An .npz whose one member `a` has `shape` and `dtype`: element k (in the member's
    storage order) is (k // every) % 251 + 1 where k % every == 0, else 0. Streamed into
    the archive 16 MiB at a time (deflate level 1)."""
    dtype = np.dtype(dtype)
    total = int(np.prod(shape))
    header = ("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }"
              % (dtype.str, fortran, tuple(shape))).encode("latin1")
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    step = (16 << 20) // dtype.itemsize
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("a.npy", "w", force_zip64=True) as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
            for start in range(0, total, step):
                chunk = np.zeros(min(step, total - start), dtype=dtype)
                marks = np.arange(start + (-start % every), start + len(chunk), every)
                chunk[marks - start] = (marks // every) % 251 + 1
                f.write(chunk.tobytes())


def measure(args):
    """(wall s, CPU s, peak MiB) of one run under GNU time."""
    run = subprocess.run([TIME, "-f", "%e %U %S %M", *args], capture_output=True, text=True,
                         check=True)
    wall, user, system, peak = run.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(peak) / 1024


def main():
    arguments = parser(1024)
    arguments.add_argument("--dtype", help="passed to every convert (BF16, F16 or F32)")
    args = arguments.parse_args()
    runs = tools(args)
    options = ["--dtype", args.dtype] if args.dtype else []
    print("| array | shape | tool | wall (s) | CPU (s) | peak RSS (MiB) |")
    print("|---|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        for label, dtype in (("2-D", "|u1"), ("3-D", "<f4")):
            elements = args.mib * (1 << 20) // np.dtype(dtype).itemsize
            if label == "2-D":
                side = int(elements ** 0.5)
                shape = (side, elements // side)
            else:
                side = int((elements // 64) ** 0.5)
                shape = (64, side, elements // 64 // side)
            paths = {w: os.path.join(tmp, w + ".npz") for w in "cf"}
            write_sparse_npz(paths["c"], shape, dtype, False)
            write_sparse_npz(paths["f"], shape, dtype, True)
            out = os.path.join(tmp, "out.safetensors")
            measured = {name: [] for name, _, _ in runs}
            for r in range(args.rounds):
                for name, cli, which in rotated(runs, r):
                    measured[name].append(measure([cli, "convert", paths[which], out, *options]))
                    os.remove(out)
            converted = " --dtype " + args.dtype if options and np.dtype(dtype).kind == "f" else ""
            for name, _, _ in runs:
                wall, cpu, peak = (statistics.median(m[k] for m in measured[name])
                                   for k in range(3))
                print("| %s %s%s | %s | %s | %.2f | %.2f | %.0f |" % (
                    label, np.dtype(dtype).name, converted, "x".join(map(str, shape)), name,
                    wall, cpu, peak))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
