# SPDX-License-Identifier: Apache-2.0
"""Files per second over many inputs: `stguard check --jobs 1|2 --from LIST` on 10,000
small safetensors files and on 1,000 PyTorch files, `stguard.check_many` (workers 1 and
2), and `stguard.dask.check` on a LocalCluster of 2 single-threaded worker processes.
Warm cache (one untimed run first); the median of --rounds runs, with the range. Prints a
Markdown table, the machine and the date.

  PYTHONPATH=build/python /usr/bin/python3 bench/scale_bench.py [--stguard build/stguard]
      [--rounds 3] [--files 10000] [--torch-files 1000]
"""
import argparse
import datetime
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import stguard

REPO = Path(__file__).resolve().parents[1]


def make_safetensors(root, count):
    header = b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    header += b" " * (-len(header) % 8)
    data = struct.pack("<Q", len(header)) + header + b"\0" * 8
    paths = []
    for i in range(count):
        folder = root / "st" / f"m{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part{i % 100}.safetensors"
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def make_torch(root, count):
    source = REPO / "corpus" / "torch" / "valid" / "module_state_dict.zip.pt"
    paths = []
    for i in range(count):
        folder = root / "pt" / f"m{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"pytorch_model{i % 100}.bin"
        shutil.copyfile(source, path)
        paths.append(str(path))
    return paths


def timed(function, rounds):
    function()  # warm-up: the page cache, the workers' imports
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return sorted(times)


def row(label, count, times):
    median = statistics.median(times)
    return (f"| {label} | {count:,} | {median:.3f} ({times[0]:.3f}-{times[-1]:.3f}) | "
            f"{count / median:,.0f} | {median / count * 1e6:.0f} |")


def cli_run(stguard_cli, listing, jobs):
    def run():
        subprocess.run([stguard_cli, "check", "-q", "--jobs", str(jobs), "--from", listing],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stguard", default=str(REPO / "build" / "stguard"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--torch-files", type=int, default=1_000)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        sets = {"safetensors": make_safetensors(root, args.files),
                "PyTorch ZIP": make_torch(root, args.torch_files)}
        for name, paths in sets.items():
            listing = root / f"{name[:2]}.txt"
            listing.write_text("\n".join(paths) + "\n")
            size = os.path.getsize(paths[0])
            for jobs in (1, 2):
                rows.append(row(f"`check --jobs {jobs}`, {name} ({size} B each)", len(paths),
                                timed(cli_run(args.stguard, str(listing), jobs), args.rounds)))
            for workers in (1, 2):
                rows.append(row(f"`check_many(workers={workers})`, {name}", len(paths),
                                timed(lambda: stguard.check_many(paths, workers),
                                      args.rounds)))
        if not args.no_dask:
            import distributed
            from stguard import dask as stguard_dask
            paths = sets["safetensors"]
            cluster = client = None
            try:
                cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                                   processes=True, dashboard_address=None,
                                                   host="127.0.0.1")
                client = distributed.Client(cluster)
                rows.append(row("`stguard.dask.check`, 2 workers x 1 thread, safetensors",
                                len(paths),
                                timed(lambda: stguard_dask.check(paths, workers=1).compute(),
                                      args.rounds)))
            finally:
                if client is not None:
                    client.close()
                if cluster is not None:
                    cluster.close()
    print("| run | files | seconds, median (range) | files/s | µs per file |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {datetime.date.today()}; "
          f"{args.rounds} rounds after a warm-up")


if __name__ == "__main__":
    sys.exit(main())
