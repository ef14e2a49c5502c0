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
import subprocess
import sys
import tempfile

import pytest

# The GGUF maker is the benchmarks' (bench/child_process.py): one generator for both.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from child_process import make_gguf  # noqa: E402

STGUARD = os.environ.get("STGUARD_CLI", "")
BOUND_MIB = 16
TIME = "/usr/bin/time"
# [name, ggml type, ne0, ne1, bytes per block, elements per block]: q8_0, q8_0, f16.
TENSORS = [["q.a", 8, 4096, 8192, 34, 32], ["q.b", 8, 4096, 2048, 34, 32],
           ["f16", 1, 4096, 8192, 2, 1]]


@pytest.mark.skipif(not STGUARD, reason="STGUARD_CLI is not set (run through ctest)")
def test_convert_peak_memory_does_not_grow_with_the_model():
    with tempfile.TemporaryDirectory() as workdir:
        src = os.path.join(workdir, "model.gguf")
        make_gguf(src, TENSORS, seed=7)
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
