#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU of ``stguard.npy.load_npz`` against ``np.load`` reading every member.

The archive: 4 members of 16 MiB of random float32, deflated (``np.savez_compressed``),
made once in $TMPDIR. Each figure is the median of ``--rounds`` calls in this process
(user + system CPU). Usage: bench/npz_load_bench.py BUILD/python [--rounds 5]
"""
import argparse
import os
import resource
import sys

import numpy as np


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def median_cpu(call, rounds):
    times = []
    for _ in range(rounds):
        start = cpu_seconds()
        call()
        times.append(cpu_seconds() - start)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("python_dir", help="the build's python folder (holds stguard/)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, args.python_dir)
    import stguard.npy

    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "stguard_npz_load_bench.npz")
    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        members = {f"m{i}": rng.standard_normal(4 << 20).astype(np.float32) for i in range(4)}
        np.savez_compressed(path, **members)

    def numpy_load():
        with np.load(path) as archive:
            for key in archive.files:
                archive[key]

    ours = median_cpu(lambda: stguard.npy.load_npz(path), args.rounds)
    theirs = median_cpu(numpy_load, args.rounds)
    print(f"{args.python_dir}: load_npz {ours:.3f} s CPU, np.load {theirs:.3f} s CPU "
          f"(ratio {ours / theirs:.2f})")


if __name__ == "__main__":
    main()
