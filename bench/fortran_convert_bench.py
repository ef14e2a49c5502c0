#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` of a Fortran-order .npy against the same array in C order, 2-D and
3-D, for elements of 1, 2, 4 and 8 bytes, with memcpy bandwidth (numpy's copy of the
same bytes, in-process) as the floor any reordering works against.

Usage: bench/fortran_convert_bench.py STGUARD_CLI [--mib N] [--rounds K] [--tmpdir DIR]
       [--baseline OLD_STGUARD_CLI]
(default 256 MiB per array, 7 rounds). Each round converts the C-order file and the
Fortran-order file (and the baseline's Fortran-order file), the order rotating each
round; a figure is the median over the rounds of the child's CPU time (user + system),
which a shared machine disturbs less than wall time. The output goes to --tmpdir
(default /dev/shm when it exists, so the disk does not hide the reordering). Prints a
table for bench/README.md; not a timed test."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from fortran_bench_common import parser, rotated, tools

CASES = [("2-D", 2), ("3-D", 3)]
DTYPES = ["|u1", "<i2", "<f4", "<f8"]


def shape_for(rank, elements):
    if rank == 2:
        side = int(elements ** 0.5)
        return (side, elements // side)
    depth = 64
    side = int((elements // depth) ** 0.5)
    return (depth, side, elements // depth // side)


def child_cpu(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def memcpy_seconds(array, rounds):
    out = np.empty_like(array, order="C")
    times = []
    for _ in range(rounds):
        start = time.process_time()
        np.copyto(out, array)  # same order on both sides: a plain copy
        times.append(time.process_time() - start)
    return statistics.median(times)


def main():
    args = parser(256).parse_args()
    runs = tools(args)
    print("| array | element | shape | C order (s) | Fortran (s) | Fortran / C |%s memcpy (s) |"
          % (" baseline Fortran (s) |" if args.baseline else ""))
    print("|---|---:|---|---:|---:|---:|%s---:|" % ("---:|" if args.baseline else ""))
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        for label, rank in CASES:
            for dtype in DTYPES:
                itemsize = np.dtype(dtype).itemsize
                shape = shape_for(rank, args.mib * (1 << 20) // itemsize)
                rng = np.random.default_rng(1)
                values = rng.integers(0, 100, size=shape, dtype=np.uint8).astype(dtype)
                paths = {"c": os.path.join(tmp, "c.npy"), "f": os.path.join(tmp, "f.npy")}
                np.save(paths["c"], np.ascontiguousarray(values))
                np.save(paths["f"], np.asfortranarray(values))
                out = os.path.join(tmp, "out.safetensors")
                times = {name: [] for name, _, _ in runs}
                for r in range(args.rounds):
                    for name, cli, which in rotated(runs, r):
                        times[name].append(child_cpu([cli, "convert", paths[which], out]))
                        os.remove(out)
                med = {name: statistics.median(t) for name, t in times.items()}
                copy = memcpy_seconds(values, args.rounds)
                extra = " %.3f |" % med["Fortran, baseline"] if args.baseline else ""
                print("| %s | %d B | %s | %.3f | %.3f | %.2fx |%s %.3f |" % (
                    label, itemsize, "x".join(map(str, shape)), med["C order"], med["Fortran"],
                    med["Fortran"] / med["C order"], extra, copy))
                sys.stdout.flush()
                del values
    return 0


if __name__ == "__main__":
    sys.exit(main())
