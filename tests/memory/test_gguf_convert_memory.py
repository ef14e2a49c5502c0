# SPDX-License-Identifier: Apache-2.0
"""`stguard convert IN.gguf OUT` streams: its peak memory does not grow with the model.

A GGUF of 107 MiB (q8_0 and f16 tensors, random blocks with finite scales) converts to
224 MiB of safetensors; the command's peak RSS must stay under 16 MiB (about 4 MiB of it
is the program itself). Reading the tensors through a mapping, or buffering a tensor,
would keep at least the 64 MiB f16 tensor (or the 128 MiB dequantized one) resident. The
peak is measured by /usr/bin/time (GNU time, %M): a child forked from this Python
process would start its ru_maxrss at this process's size. Run by ctest in the ordinary
build only."""
import os
import struct
import subprocess
import sys
import tempfile

import pytest

STGUARD = os.environ.get("STGUARD_CLI", "")
BOUND_MIB = 16
TIME = "/usr/bin/time"

MAKE = r"""
import struct, sys
import numpy as np
path = sys.argv[1]
rng = np.random.default_rng(7)
def string(t):
    b = t.encode(); return struct.pack("<Q", len(b)) + b
# (name, ggml type, ne0, ne1, bytes per block, elements per block)
tensors = [("q.a", 8, 4096, 8192, 34, 32), ("q.b", 8, 4096, 2048, 34, 32),
           ("f16", 1, 4096, 8192, 2, 1)]
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
        data = rng.integers(0, 256, size, dtype=np.uint8)
        if t == 8:
            blocks = data.reshape(-1, tsize)
            blocks[:, 0:2] = np.full((len(blocks), 1), 0.01, np.float16).view(np.uint8)
        else:
            data = rng.standard_normal(size // 2).astype(np.float16).view(np.uint8)
        f.write(data.tobytes())
        f.write(b"\0" * (-size % 32))
"""


@pytest.mark.skipif(not STGUARD, reason="STGUARD_CLI is not set (run through ctest)")
def test_convert_peak_memory_does_not_grow_with_the_model():
    with tempfile.TemporaryDirectory() as workdir:
        src = os.path.join(workdir, "model.gguf")
        subprocess.run([sys.executable, "-c", MAKE, src], check=True)
        out = os.path.join(workdir, "out.safetensors")
        if not os.path.exists(TIME):
            pytest.skip("GNU time (/usr/bin/time) is absent: cannot measure the peak")
        run = subprocess.run([TIME, "-f", "peak_kib=%M", STGUARD, "convert", src, out],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        peak_mib = int(run.stderr.rsplit("peak_kib=", 1)[1]) / 1024
        out_mib = os.path.getsize(out) / (1 << 20)
        print(f"convert: {os.path.getsize(src) / (1 << 20):.0f} MiB GGUF -> {out_mib:.0f} MiB "
              f"safetensors, peak RSS {peak_mib:.1f} MiB")
        assert out_mib > 200
        assert peak_mib < BOUND_MIB
