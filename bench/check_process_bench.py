# SPDX-License-Identifier: Apache-2.0
"""Times whole processes of several stguard builds on the same arguments, in turn, in one
run: wall, user and system seconds of each run (the kernel's accounting of the reaped
child), after one untimed warm-up of each. Prints a Markdown table of the medians with the
range (min-max), the machine, the command and the date.

  check_process_bench.py [--rounds N] LABEL=BINARY... -- ARGUMENT...

Run by tools/bench_check_process.sh, which builds the baseline and makes the input."""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time


def timed_run(cmd):
    """Runs cmd with its output discarded; returns (wall, user, sys) seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit(f"{cmd} failed (status {status})")
    return wall, usage.ru_utime, usage.ru_stime


def cell(values):
    values = sorted(values)
    return f"{statistics.median(values):.3f} ({values[0]:.3f}-{values[-1]:.3f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("builds", nargs="+", help="LABEL=BINARY, then -- and the arguments")
    args, rest = parser.parse_known_args()
    builds = [b.split("=", 1) for b in args.builds if "=" in b]
    arguments = [a for a in args.builds if "=" not in a] + [a for a in rest if a != "--"]
    for _, binary in builds:
        timed_run([binary] + arguments)  # warm-up: page cache, loader
    runs = {label: [] for label, _ in builds}
    for round_index in range(args.rounds):
        # The order rotates each round, so drift in the machine's load weighs on all alike.
        shift = round_index % len(builds)
        for label, binary in builds[shift:] + builds[:shift]:
            runs[label].append(timed_run([binary] + arguments))
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"{platform.machine()} {os.cpu_count()} cores, load average {load} at the end, "
          f"{args.rounds} rounds; `stguard {' '.join(os.path.basename(a) for a in arguments)}`")
    print()
    print("| build | wall s | user s | sys s |")
    print("| --- | ---: | ---: | ---: |")
    for label, _ in builds:
        columns = list(zip(*runs[label]))
        print(f"| {label} | {cell(columns[0])} | {cell(columns[1])} | {cell(columns[2])} |")
    print()
    print("median (min-max) of each build's rounds, whole process")


if __name__ == "__main__":
    main()
