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
import time

stguard = sys.argv[1]
scale = int(sys.argv[2]) if len(sys.argv) > 2 else 1
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
workdir = tempfile.mkdtemp(prefix="stguard-gguf-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
src = os.path.join(workdir, "model.gguf")

# The model is made in a child process (a parent's peak RSS is inherited by its children's
# ru_maxrss). Blocks are random bytes with finite f16 scales: every byte pattern decodes.
MAKE = r"""
import struct, sys
import numpy as np
scale, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)
def string(t):
    b = t.encode(); return struct.pack("<Q", len(b)) + b
# (name, ggml type, ne0, ne1, bytes per block, elements per block)
tensors = []
for i in range(12 * scale):
    tensors.append((f"blk.{i}.ffn.weight", 8, 4096, 4096, 34, 32))      # q8_0
for i in range(4 * scale):
    tensors.append((f"blk.{i}.attn.weight", 12, 4096, 4096, 144, 256))  # q4_K
for i in range(2 * scale):
    tensors.append((f"blk.{i}.norm.weight", 1, 4096, 4096, 2, 1))       # f16
kv = string("general.architecture") + struct.pack("<I", 8) + string("llama")
head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1) + kv
offset, sizes = 0, []
for name, t, ne0, ne1, tsize, bsize in tensors:
    size = ne0 * ne1 // bsize * tsize
    head += string(name) + struct.pack("<IQQIQ", 2, ne0, ne1, t, offset)
    sizes.append(size)
    offset += (size + 31) // 32 * 32
head += b"\0" * (-len(head) % 32)
with open(path, "wb") as f:
    f.write(head)
    for (name, t, ne0, ne1, tsize, bsize), size in zip(tensors, sizes):
        data = rng.integers(0, 256, size, dtype=np.uint8)
        if t == 1:
            data = rng.standard_normal(size // 2).astype(np.float16).view(np.uint8)
        else:
            blocks = data.reshape(-1, tsize)
            d = np.full(len(blocks), 0.01, np.float16).view(np.uint8).reshape(-1, 2)
            blocks[:, 0:2] = d
            if t == 12:
                blocks[:, 2:4] = d  # dmin
        f.write(data.tobytes())
        f.write(b"\0" * (-size % 32))
"""
subprocess.run([sys.executable, "-c", MAKE, str(scale), src], check=True)
out = os.path.join(workdir, "out.safetensors")
subprocess.run([stguard, "convert", src, out], check=True, capture_output=True)
out_size = os.path.getsize(out)
sample = os.path.join(workdir, "sample.bin")  # what the copy copies: the output's size
os.rename(out, sample)

COPY = r"""
import os, sys
src, dst = sys.argv[1], sys.argv[2]
tmp = dst + ".tmp"
with open(src, "rb") as f, open(tmp, "wb") as g:
    while True:
        b = f.read(8 << 20)
        if not b: break
        g.write(b)
    g.flush(); os.fsync(g.fileno())
os.rename(tmp, dst)
"""


def run(cmd):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"{cmd} failed: {proc.stderr.read().decode()}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024  # MiB


cases = {
    "stguard convert (GGUF -> safetensors)": [stguard, "convert", src, out],
    "plain copy of the output's size (read, write, fsync, rename)": [
        sys.executable, "-c", COPY, sample, os.path.join(workdir, "copy.bin")],
}
for path in (src, sample):  # warm the page cache, in small reads
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
runs = {name: [] for name in cases}
names = list(cases)
for round_index in range(repeat):
    shift = round_index % len(names)
    for name in names[shift:] + names[:shift]:
        runs[name].append(run(cases[name]))
copy_name = names[1]
print(f"input: {os.path.getsize(src) / 1e9:.3f} GB GGUF ({18 * scale} tensors: q8_0, q4_K, "
      f"f16); output {out_size / 1e9:.3f} GB safetensors; median of {repeat} interleaved rounds")
print("| case | time (s) | min-max (s) | output GB/s | vs copy (paired by round) | peak RSS (MiB) |")
print("|---|---:|---:|---:|---:|---:|")
for name in cases:
    times = [r[0] for r in runs[name]]
    t = statistics.median(times)
    paired = statistics.median(c[0] / r[0] for c, r in zip(runs[copy_name], runs[name]))
    rss = max(r[1] for r in runs[name])
    print(f"| {name} | {t:.2f} | {min(times):.2f}-{max(times):.2f} | {out_size / t / 1e9:.2f} "
          f"| {paired:.2f}x | {rss:.0f} |")
for path in os.listdir(workdir):
    os.unlink(os.path.join(workdir, path))
os.rmdir(workdir)
