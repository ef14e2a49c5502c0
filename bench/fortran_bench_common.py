# SPDX-License-Identifier: Apache-2.0
"""What the two Fortran-order benchmarks (bench/fortran_convert_bench.py for .npy files,
bench/fortran_npz_bench.py for deflated .npz members) share: their command line,
STGUARD_CLI [--mib N] [--rounds K] [--tmpdir DIR] [--baseline OLD_STGUARD_CLI], and the
tools each round runs, in an order rotating from round to round."""
import argparse
import os


def parser(default_mib):
    """The shared arguments; a script adds its own before parse_args()."""
    result = argparse.ArgumentParser()
    result.add_argument("stguard")
    result.add_argument("--mib", type=int, default=default_mib)
    result.add_argument("--rounds", type=int, default=7)
    result.add_argument("--tmpdir",
                        default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    result.add_argument("--baseline")
    return result


def tools(args):
    """(name, stguard, file) per tool: the C-order and the Fortran-order file with
    STGUARD_CLI, and the Fortran-order one with --baseline when given."""
    result = [("C order", args.stguard, "c"), ("Fortran", args.stguard, "f")]
    if args.baseline:
        result.append(("Fortran, baseline", args.baseline, "f"))
    return result


def rotated(items, round_index):
    """`items` starting at round_index (modulo their count): each tool goes first in turn."""
    at = round_index % len(items)
    return items[at:] + items[:at]
