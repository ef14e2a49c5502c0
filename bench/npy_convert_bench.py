#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` of a .npy and of .npz archives (stored and deflated) against np.load +
stguard.numpy.save_file, and against a plain copy of the file, in the same run.

Usage: PYTHONPATH=build/python bench/npy_convert_bench.py STGUARD_CLI [MiB] [TMPDIR]
(default 1024 MiB of float32). Not a timed test: it prints a table for bench/README.md.
Each figure is the best wall time of three runs; every output is fsync'ed by stguard, so
the copy is fsync'ed too."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import stguard.numpy


def best_of(function, runs=3):
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def copy_synced(source, destination):
    shutil.copyfile(source, destination)
    with open(destination, "rb+") as f:
        os.fsync(f.fileno())


def main():
    cli = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    folder = tempfile.mkdtemp(dir=sys.argv[3] if len(sys.argv) > 3 else None)
    rng = np.random.default_rng(0)
    # Half random, half smooth: a deflated member neither incompressible nor all zeros.
    array = np.concatenate([rng.standard_normal(mib << 17, dtype=np.float32),
                            np.linspace(0, 1, mib << 17, dtype=np.float32)])
    files = {"npy": os.path.join(folder, "a.npy"), "npz stored": os.path.join(folder, "a.npz"),
             "npz deflated": os.path.join(folder, "c.npz")}
    np.save(files["npy"], array)
    np.savez(files["npz stored"], a=array)
    np.savez_compressed(files["npz deflated"], a=array)
    out = os.path.join(folder, "out.safetensors")
    print("| input (%d MiB of float32) | file MiB | stguard convert | np.load + save_file | ratio | copy + fsync |" % mib)
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, path in files.items():
        ours = best_of(lambda: subprocess.run([cli, "convert", path, out], check=True))

        def reference():
            loaded = np.load(path)
            tensors = {"a": loaded} if name == "npy" else {k: loaded[k] for k in loaded.files}
            stguard.numpy.save_file(tensors, out)
        theirs = best_of(reference)
        copy = best_of(lambda: copy_synced(path, out))
        print("| %s | %d | %.2f s | %.2f s | %.2fx | %.2f s |" % (
            name, os.path.getsize(path) >> 20, ours, theirs, theirs / ours, copy))
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
