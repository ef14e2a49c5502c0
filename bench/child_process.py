# SPDX-License-Identifier: Apache-2.0
"""What the Python benchmarks and memory tests share: timing a command in a child process
with its peak RSS, a plain copy to compare conversions with, interleaved rounds, and a
GGUF model made in a child process.

Children, not this process, do the heavy work: Linux starts a forked child's ru_maxrss at
its parent's peak, so a parent that made or read a large file would inflate every
measurement after it. Imported by bench/*_bench.py (run from the checkout) and by
tests/memory/ (which add this folder to sys.path)."""
import json
import os
import statistics
import subprocess
import sys
import time

# A plain copy done the way stguard writes (read, write a temporary file, fsync, rename):
# the throughput ceiling for any conversion that writes that many bytes.
_COPY = r"""
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

# A GGUF v3 file: the tensors given as JSON [name, ggml type, ne0, ne1, bytes per block,
# elements per block], one metadata key, random blocks whose f16 scale (and, for q4_K,
# dmin) is a finite 0.01 so every byte pattern decodes; f16 tensors hold normal values.
_MAKE_GGUF = r"""
import json, struct, sys
import numpy as np
path, tensors, seed = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(seed)
def string(t):
    b = t.encode(); return struct.pack("<Q", len(b)) + b
head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1)
head += string("general.architecture") + struct.pack("<I", 8) + string("llama")
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
        if t == 1:
            data = rng.standard_normal(size // 2).astype(np.float16).view(np.uint8)
        else:
            data = rng.integers(0, 256, size, dtype=np.uint8)
            blocks = data.reshape(-1, tsize)
            scale = np.full(len(blocks), 0.01, np.float16).view(np.uint8).reshape(-1, 2)
            blocks[:, 0:2] = scale
            if t == 12:
                blocks[:, 2:4] = scale  # q4_K's dmin
        f.write(data.tobytes())
        f.write(b"\0" * (-size % 32))
"""


def make_gguf(path, tensors, seed=1):
    """Writes the GGUF described by `tensors` (see _MAKE_GGUF) in a child process."""
    subprocess.run([sys.executable, "-c", _MAKE_GGUF, path, json.dumps(tensors), str(seed)],
                   check=True)


def copy_command(src, dst):
    """The command that copies src to dst as stguard writes a file (see _COPY)."""
    return [sys.executable, "-c", _COPY, src, dst]


def run_child(cmd, check=True):
    """Runs cmd with its output discarded; returns (seconds, peak RSS in MiB). With
    `check`, a failing command stops the benchmark with its stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if check and status != 0:
        sys.exit(f"{cmd} failed: {proc.stderr.read().decode()}")
    proc.stderr.close()
    return elapsed, usage.ru_maxrss / 1024


def warm_page_cache(*paths):
    """Reads each file once, in small reads (this process's peak RSS stays small)."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass


def interleaved_rounds(cases, repeat):
    """Runs every case once per round, `repeat` rounds, the order rotating each round, so
    that load drift on a shared machine weighs on all cases alike and no case always
    inherits the disk's backlog from the heaviest one. Returns {name: [(s, MiB), ...]}."""
    runs = {name: [] for name in cases}
    names = list(cases)
    for round_index in range(repeat):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            runs[name].append(run_child(cases[name]))
    return runs


def paired_ratio(reference_runs, case_runs):
    """The median over rounds of reference time / case time (the case's throughput
    relative to the reference run beside it)."""
    return statistics.median(r[0] / c[0] for r, c in zip(reference_runs, case_runs))


def remove_tree(workdir):
    """Removes the files of a benchmark's flat work folder, then the folder."""
    for name in os.listdir(workdir):
        os.unlink(os.path.join(workdir, name))
    os.rmdir(workdir)
