#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: `stguard convert IN.gguf OUT.safetensors` on a GGUF model of quantized and
plain tensors, against a plain copy of a file of the OUTPUT's size done the way stguard
writes (read, write a temporary file, fsync, rename): the ceiling for any conversion that
writes that many bytes. Peak RSS of each (ru_maxrss of the child). REPEAT interleaved
rounds (default 5), the order rotating; reports medians and the copy/convert time ratio
paired round by round.
  bench/gguf_convert_bench.py STGUARD_BINARY [SCALE] [REPEAT]
SCALE (default 1) multiplies the tensor count: 1 gives ~0.3 GB of GGUF and ~1.2 GB of
safetensors (F32 from Q8_0 and Q4_K, F16 copied).
"""
import os
import statistics
import subprocess
import sys
import tempfile

from child_process import (copy_command, interleaved_rounds, make_gguf, paired_ratio,
                           remove_tree, warm_page_cache)

stguard = sys.argv[1]
scale = int(sys.argv[2]) if len(sys.argv) > 2 else 1
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
workdir = tempfile.mkdtemp(prefix="stguard-gguf-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
src = os.path.join(workdir, "model.gguf")

# [name, ggml type, ne0, ne1, bytes per block, elements per block]
tensors = ([[f"blk.{i}.ffn.weight", 8, 4096, 4096, 34, 32] for i in range(12 * scale)] +  # q8_0
           [[f"blk.{i}.attn.weight", 12, 4096, 4096, 144, 256] for i in range(4 * scale)] +  # q4_K
           [[f"blk.{i}.norm.weight", 1, 4096, 4096, 2, 1] for i in range(2 * scale)])  # f16
make_gguf(src, tensors, seed=1)
out = os.path.join(workdir, "out.safetensors")
subprocess.run([stguard, "convert", src, out], check=True, capture_output=True)
out_size = os.path.getsize(out)
sample = os.path.join(workdir, "sample.bin")  # what the copy copies: the output's size
os.rename(out, sample)

cases = {
    "stguard convert (GGUF -> safetensors)": [stguard, "convert", src, out],
    "plain copy of the output's size (read, write, fsync, rename)":
        copy_command(sample, os.path.join(workdir, "copy.bin")),
}
warm_page_cache(src, sample)
runs = interleaved_rounds(cases, repeat)
copy_name = list(cases)[1]
print(f"input: {os.path.getsize(src) / 1e9:.3f} GB GGUF ({18 * scale} tensors: q8_0, q4_K, "
      f"f16); output {out_size / 1e9:.3f} GB safetensors; median of {repeat} interleaved rounds")
print("| case | time (s) | min-max (s) | output GB/s | vs copy (paired by round) | peak RSS (MiB) |")
print("|---|---:|---:|---:|---:|---:|")
for name in cases:
    times = [r[0] for r in runs[name]]
    t = statistics.median(times)
    paired = paired_ratio(runs[copy_name], runs[name])
    rss = max(r[1] for r in runs[name])
    print(f"| {name} | {t:.2f} | {min(times):.2f}-{max(times):.2f} | {out_size / t / 1e9:.2f} "
          f"| {paired:.2f}x | {rss:.0f} |")
remove_tree(workdir)
