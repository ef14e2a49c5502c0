#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: `stguard convert` on a 1 GB torch.save state dict, against
  (a) a plain copy of the same bytes done the way stguard writes (read, write a temporary
      file, fsync, rename), the throughput ceiling for any conversion, and
  (b) torch.load followed by writing safetensors (what conversion scripts run today; the
      safetensors Python package is not on Debian, so the file is written with the same
      header + raw bytes layout in Python, which is what safetensors.torch.save_file does).
Peak RSS of each (ru_maxrss of the child). Runs REPEAT rounds (default 3) of every case,
interleaved in an order that rotates each round, and reports each case's median, with the page cache warm (the input is read
once first).

  bench/torch_convert_bench.py STGUARD_BINARY [SIZE_MB] [REPEAT]
"""
import os
import statistics
import subprocess
import sys
import tempfile

from child_process import (copy_command, interleaved_rounds, paired_ratio, remove_tree,
                           warm_page_cache)


stguard = sys.argv[1]
size_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 3
workdir = tempfile.mkdtemp(prefix="stguard-torch-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
src = os.path.join(workdir, "pytorch_model.bin")

# A state dict shaped like a transformer's: 64 MiB matrices plus small vectors, F32. Made
# in a child process, so this process stays small: Linux carries a parent's peak RSS into
# ru_maxrss of the children it forks.
n = size_mb // 64
MAKE = r"""
import sys, torch
n, path = int(sys.argv[1]), sys.argv[2]
state = {}
for i in range(n):
    state[f"layers.{i}.weight"] = torch.randn(4096, 4096)
    state[f"layers.{i}.bias"] = torch.randn(4096)
torch.save(state, path)
"""
subprocess.run([sys.executable, "-c", MAKE, str(n), src], check=True)
size = os.path.getsize(src)

TORCH = r"""
import json, os, sys, torch
src, dst = sys.argv[1], sys.argv[2]
sd = torch.load(src, map_location="cpu")
names = sorted(sd)
header, offset = {"__metadata__": {"format": "pt"}}, 0
for k in names:
    t = sd[k]
    header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + t.numel() * 4]}
    offset += t.numel() * 4
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open(dst, "wb") as f:
    f.write(len(h).to_bytes(8, "little")); f.write(h)
    for k in names:
        f.write(sd[k].contiguous().numpy().tobytes())
    f.flush(); os.fsync(f.fileno())
"""


cases = {
    "stguard convert": [stguard, "convert", src, os.path.join(workdir, "out.safetensors")],
    "stguard canon of the same tensors as safetensors (no pickle, no CRC-32)": [
        stguard, "canon", os.path.join(workdir, "reference.safetensors"),
        os.path.join(workdir, "canon.safetensors")],
    "plain copy (read, write, fsync, rename)": copy_command(src,
                                                            os.path.join(workdir, "copy.bin")),
    "torch.load + write safetensors": [sys.executable, "-c", TORCH, src,
                                       os.path.join(workdir, "torch.safetensors")],
}
subprocess.run([stguard, "convert", src, os.path.join(workdir, "reference.safetensors")],
               check=True, capture_output=True)
warm_page_cache(src)
runs = interleaved_rounds(cases, repeat)  # interleaved and rotating: see child_process
results = {}
for name in cases:
    t = statistics.median(r[0] for r in runs[name])
    rss = max(r[1] for r in runs[name])
    results[name] = (t, size / t / 1e9, rss, min(r[0] for r in runs[name]),
                     max(r[0] for r in runs[name]))
COPY_CASE = "plain copy (read, write, fsync, rename)"
copy_tput = results[COPY_CASE][1]
# The paired ratio pairs each round's copy with the case run beside it, which cancels most
# of the load drift that makes the medians of separate cases disagree on a shared machine.
paired = {name: paired_ratio(runs[COPY_CASE], runs[name]) for name in cases}
print(f"input: {size / 1e9:.3f} GB torch.save zip checkpoint ({2 * n} tensors, F32), "
      f"median of {repeat} interleaved rounds")
print("| case | time (s) | min-max (s) | throughput (GB/s) | vs copy (medians) "
      "| vs copy (paired by round) | peak RSS (MiB) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, (t, tput, rss, fastest, slowest) in results.items():
    print(f"| {name} | {t:.2f} | {fastest:.2f}-{slowest:.2f} | {tput:.2f} | "
          f"{tput / copy_tput:.2f}x | {paired[name]:.2f}x | {rss:.0f} |")
remove_tree(workdir)
