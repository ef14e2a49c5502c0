#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: `stguard convert` of every input kind (safetensors --dtype, .bin ZIP, legacy
.pt, .npy, .npz, GGUF, GGUF --dtype, a safetensors folder, a PyTorch folder, .npy to -),
two binaries (before, after) in one session: ROUNDS rounds (default 7), each running
before then after, the order swapping every round; the median seconds and the highest
peak RSS (ru_maxrss of the child) of each. The inputs (128 MiB of float32, made with
numpy and torch, the GGUF with child_process.make_gguf) are made once in WORKDIR.
  bench/convert_pipeline_bench.py BEFORE AFTER WORKDIR [ROUNDS]
ONLY="case,case" runs only the named cases."""
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from child_process import make_gguf, run_child, warm_page_cache

before, after, work = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 7
os.makedirs(work, exist_ok=True)
py = "/usr/bin/python3"
MIB = 128

def make_inputs():
    subprocess.run([py, "-c", f"""
import numpy as np, torch, os
rng = np.random.default_rng(1)
n = {MIB} * 1024 * 1024 // 4 // 8
arrays = {{f"layer{{i}}.weight": rng.standard_normal(n, dtype=np.float32).reshape(-1, 1024) for i in range(8)}}
np.save("{work}/a.npy", np.concatenate(list(arrays.values())))
np.savez("{work}/a.npz", **arrays)
sd = {{k: torch.from_numpy(v) for k, v in arrays.items()}}
torch.save(sd, "{work}/a.bin")
torch.save(sd, "{work}/a.pt", _use_new_zipfile_serialization=False)
os.makedirs("{work}/ptdir", exist_ok=True)
keys = list(sd)
torch.save({{k: sd[k] for k in keys[:4]}}, "{work}/ptdir/pytorch_model-00001-of-00002.bin")
torch.save({{k: sd[k] for k in keys[4:]}}, "{work}/ptdir/pytorch_model-00002-of-00002.bin")
import json
wm = {{k: "pytorch_model-0000%d-of-00002.bin" % (1 if i < 4 else 2) for i, k in enumerate(keys)}}
json.dump({{"metadata": {{}}, "weight_map": wm}}, open("{work}/ptdir/pytorch_model.bin.index.json", "w"))
"""], check=True)
    subprocess.run([before, "convert", f"{work}/a.bin", f"{work}/a.safetensors"], check=True,
                   capture_output=True)
    subprocess.run([before, "convert", f"{work}/ptdir", f"{work}/stdir"], check=True,
                   capture_output=True)
    tensors = ([[f"blk.{i}.ffn.weight", 8, 4096, 1024, 34, 32] for i in range(6)] +
               [[f"blk.{i}.attn.weight", 12, 4096, 1024, 144, 256] for i in range(2)] +
               [[f"blk.{i}.norm.weight", 1, 4096, 1024, 2, 1] for i in range(2)])
    make_gguf(f"{work}/a.gguf", tensors, seed=1)

if not os.path.exists(f"{work}/a.gguf"):
    make_inputs()

cases = {
    "safetensors --dtype F16": (["a.safetensors", "OUT", "--dtype", "F16"], False),
    ".bin ZIP": (["a.bin", "OUT"], False),
    "legacy .pt": (["a.pt", "OUT"], False),
    ".npy": (["a.npy", "OUT"], False),
    ".npz": (["a.npz", "OUT"], False),
    "GGUF": (["a.gguf", "OUT"], False),
    "GGUF --dtype F16": (["a.gguf", "OUT", "--dtype", "F16"], False),
    "safetensors folder --dtype BF16": (["stdir", "OUTDIR", "--dtype", "BF16"], True),
    "PyTorch folder": (["ptdir", "OUTDIR"], True),
    ".npy to -": (["a.npy", "-"], False),
}
for f in os.listdir(work):
    p = os.path.join(work, f)
    if os.path.isfile(p):
        warm_page_cache(p)

def run(binary, args, folder):
    out = os.path.join(work, "out" if folder else "out.safetensors")
    # The first argument is the input, in WORKDIR; OUT/OUTDIR name the output.
    argv = [binary, "convert", os.path.join(work, args[0])]
    argv += [out if a in ("OUT", "OUTDIR") else a for a in args[1:]]
    result = run_child(argv)
    if os.path.isdir(out):
        shutil.rmtree(out)
    elif os.path.exists(out):
        os.remove(out)
    return result

print(f"| input ({MIB} MiB of F32) | before s | after s | after/before | before MiB | after MiB |")
print("|---|---|---|---|---|---|")
only = os.environ.get("ONLY")
for name, (args, folder) in cases.items():
    if only and name not in only.split(","):
        continue
    runs = {before: [], after: []}
    for r in range(rounds):
        order = (before, after) if r % 2 == 0 else (after, before)
        for binary in order:
            runs[binary].append(run(binary, args, folder))
    b = statistics.median(s for s, _ in runs[before]); a = statistics.median(s for s, _ in runs[after])
    bm = max(m for _, m in runs[before]); am = max(m for _, m in runs[after])
    print(f"| {name} | {b:.3f} | {a:.3f} | {a / b:.2f} | {bm:.1f} | {am:.1f} |", flush=True)
