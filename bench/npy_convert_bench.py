#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` of a .npy and of .npz archives (stored and deflated), and of a 3-D
Fortran-order .npy, against np.load + stguard.numpy.save_file and against a plain copy of
the file, in the same run.

Usage: PYTHONPATH=build/python bench/npy_convert_bench.py STGUARD_CLI [--mib N]
       [--tmpdir DIR] [--runs K] [--baseline OLD_STGUARD_CLI]
(default 1024 MiB of float32, best of 3). Not a timed test: it prints a table for
bench/README.md (ctest runs it at 2 MiB, once, as a smoke test). Every figure is a whole
process, started and waited for (interpreter start and imports included for numpy), its
wall time and peak RSS (by GNU time); every output is fsync'ed by stguard, so the copy is fsync'ed too.
--baseline times another stguard (an older build) on the same files, for before/after."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

if not os.access("/usr/bin/time", os.X_OK):
    print("SKIP: needs GNU time (/usr/bin/time) for each process's peak RSS")
    sys.exit(77)

# The alternative: numpy loads the file whole, stguard.numpy writes the safetensors file.
REFERENCE = """
import sys
import numpy as np
import stguard.numpy
kind, path, out = sys.argv[1:]
loaded = np.load(path)
tensors = {"a": loaded} if kind == "npy" else {k: loaded[k] for k in loaded.files}
stguard.numpy.save_file(tensors, out)
"""

COPY = """
import os, shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
with open(sys.argv[2], "rb+") as f:
    os.fsync(f.fileno())
"""


def run_process(command, report):
    """Wall seconds and peak RSS (MiB) of one child process, which must succeed. GNU time
    starts it: a child forked by Python would inherit Python's peak RSS as its own."""
    start = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report, *command], check=True,
                   stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    with open(report) as f:
        return elapsed, int(f.read().split()[-1]) / 1024


def best_of(command, runs, out):
    """The best wall time of `runs` runs, and the largest peak RSS among them."""
    times, peaks = [], []
    for _ in range(runs):
        if os.path.exists(out):
            os.remove(out)
        elapsed, peak = run_process(command, out + ".rss")
        times.append(elapsed)
        peaks.append(peak)
    return min(times), max(peaks)


def write_inputs(folder, mib):
    rng = np.random.default_rng(0)
    # Half random, half smooth: a deflated member neither incompressible nor all zeros.
    array = np.concatenate([rng.standard_normal(mib << 17, dtype=np.float32),
                            np.linspace(0, 1, mib << 17, dtype=np.float32)])
    files = {"npy": os.path.join(folder, "a.npy"), "npz stored": os.path.join(folder, "a.npz"),
             "npz deflated": os.path.join(folder, "c.npz"),
             "npy Fortran 3-D": os.path.join(folder, "f.npy")}
    np.save(files["npy"], array)
    np.savez(files["npz stored"], a=array)
    np.savez_compressed(files["npz deflated"], a=array)
    # A short first axis, the shape a per-element walk handles worst.
    np.save(files["npy Fortran 3-D"], np.asfortranarray(array.reshape(64, -1, 1024)))
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cli")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--tmpdir")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="another stguard to time on the same files")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(dir=args.tmpdir)
    try:
        files = write_inputs(folder, args.mib)
        out = os.path.join(folder, "out.safetensors")
        before = " | before (--baseline)" if args.baseline else ""
        print("| input (%d MiB of float32) | file MiB | stguard convert (peak RSS)%s | "
              "np.load + save_file (peak RSS) | ratio | copy + fsync |" % (args.mib, before))
        print("| --- | ---: | ---: |%s ---: | ---: | ---: |" % (" ---: |" if before else ""))
        for name, path in files.items():
            ours, our_peak = best_of([args.cli, "convert", path, out], args.runs, out)
            old = ""
            if args.baseline:
                old_time, old_peak = best_of([args.baseline, "convert", path, out], args.runs,
                                             out)
                old = " %.2f s (%.0f MiB) |" % (old_time, old_peak)
            kind = "npy" if name.startswith("npy") else "npz"
            theirs, their_peak = best_of([sys.executable, "-c", REFERENCE, kind, path, out],
                                         args.runs, out)
            copy, _ = best_of([sys.executable, "-c", COPY, path, out], args.runs, out)
            print("| %s | %d | %.2f s (%.0f MiB) |%s %.2f s (%.0f MiB) | %.2fx | %.2f s |" % (
                name, os.path.getsize(path) >> 20, ours, our_peak, old, theirs, their_peak,
                theirs / ours, copy))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
