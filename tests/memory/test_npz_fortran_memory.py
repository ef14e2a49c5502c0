# SPDX-License-Identifier: Apache-2.0
"""`stguard convert IN.npz OUT` of a deflated Fortran-order member keeps a bounded memory.

The member (3-D, 512 MiB of bytes, sparse: every 4099th element non-zero) deflates to
about 2 MiB and is streamed into the archive here, never held by this process. Its
elements come out of the inflater in Fortran order and are placed at their C-order
places in the output file as they come: the command's peak RSS must stay under 128 MiB
(the 64 MiB gather buffer, 16 MiB of output pages between releases, the program), where
inflating it whole first, as before, held all 512 MiB. The output is checked against
the array's C-order positions. The same holds with --dtype (a 256 MiB float32 member
converted to F16 as it is placed), where the member used to be inflated whole too. The
peak is GNU time's (%M), as in the GGUF memory test.
Run by ctest in the ordinary build only."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

# The member maker is the benchmark's (bench/fortran_npz_bench.py): one generator for both.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from fortran_npz_bench import EVERY, write_sparse_npz  # noqa: E402

STGUARD = os.environ.get("STGUARD_CLI", "")
BOUND_MIB = 128
TIME = "/usr/bin/time"
SHAPE = (64, 2048, 4096)  # d0 * d1 = 128 Ki elements a slab (the last index fixed)


# (shape, member dtype, --dtype, output numpy dtype): a 512 MiB |u1 member as it is, and a
# 256 MiB <f4 member converted to F16 as it is placed (128 MiB out).
CASES = [(SHAPE, "|u1", None, np.uint8), ((64, 1024, 1024), "<f4", "F16", np.float16)]


@pytest.mark.skipif(not STGUARD, reason="STGUARD_CLI is not set (run through ctest)")
@pytest.mark.parametrize("shape,dtype,target,out_dtype", CASES)
def test_deflated_fortran_member_converts_in_bounded_memory(shape, dtype, target, out_dtype):
    if not os.path.exists(TIME):
        pytest.skip("GNU time (/usr/bin/time) is absent: cannot measure the peak")
    # /dev/shm where there is one: the disk's fsync of 512 MiB would dominate the run.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=shm) as workdir:
        src = os.path.join(workdir, "fortran.npz")
        write_sparse_npz(src, shape, dtype, True)
        out = os.path.join(workdir, "out.safetensors")
        options = ["--dtype", target] if target else []
        run = subprocess.run([TIME, "-f", "peak_kib=%M", STGUARD, "convert", src, out, *options],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        peak_mib = int(run.stderr.rsplit("peak_kib=", 1)[1]) / 1024
        data_mib = np.prod(shape) * np.dtype(dtype).itemsize / (1 << 20)
        print(f"convert {' '.join(options)}: {os.path.getsize(src) / (1 << 20):.1f} MiB npz "
              f"holding a {data_mib:.0f} MiB Fortran-order member, peak RSS {peak_mib:.1f} MiB")
        raw = np.memmap(out, dtype=np.uint8, mode="r")
        header_len = int(raw[:8].view("<u8")[0])
        data = raw[8 + header_len:].view(out_dtype)
        assert data.size == np.prod(shape)
        marks = np.arange(0, data.size, EVERY)
        places = np.ravel_multi_index(np.unravel_index(marks, shape, order="F"), shape)
        assert np.array_equal(data[places], ((marks // EVERY) % 251 + 1).astype(out_dtype))
        assert np.count_nonzero(data) == marks.size
        assert peak_mib < BOUND_MIB
