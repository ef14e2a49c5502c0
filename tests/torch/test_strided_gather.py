# SPDX-License-Identifier: Apache-2.0
"""`stguard convert` gathers strided views in time linear in its output, whatever their
dimensions (src/torch/strided_gather.h): views written by torch.save itself (expanded,
as_strided with zero, overlapping and transposed strides, many unit dimensions) convert to
exactly the bytes torch.load gives, quickly.

The reproducer: a U8 view of shape (200000, 1 x 50000) with zero strides, a 200 KB file;
before the plan dropped unit dimensions its gather took elements x dims steps (about 40 s).
Needs Debian's python3-torch; skipped with a message without it."""
import json
import os
import struct
import subprocess
import time

import pytest

torch = pytest.importorskip("torch", reason="torch (python3-torch) is the reference here")

STGUARD = os.environ.get("STGUARD_CLI", "")
SECONDS = 5.0


def read_safetensors(path):
    """Header and raw bytes per tensor, read independently of stguard."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        out[name] = (entry["dtype"], entry["shape"], data[8 + n + begin:8 + n + end])
    return out


def torch_bytes(tensor):
    # reshape(-1) first: numpy holds at most 32 dimensions.
    return tensor.contiguous().reshape(-1).numpy().tobytes()


def views():
    base = torch.arange(7, dtype=torch.uint8)
    floats = torch.arange(60, dtype=torch.float32)
    many_units = (200_000,) + (1,) * 50_000
    return {
        "unit_dims_stride0": base.as_strided(many_units, (0,) * len(many_units), 3),
        "expanded": floats[:4].reshape(4, 1).expand(4, 1000),
        "overlapping": floats.as_strided((20, 8), (2, 1), 1),
        "transposed": floats.reshape(6, 10).t(),
        "stepped_with_units": floats.reshape(3, 1, 4, 5)[:, :, ::2, 1::3],
        "zero_inner": floats.as_strided((5, 1, 7), (3, 11, 0)),
        "mergeable": floats.reshape(3, 4, 5)[:, :, :4],
    }


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    if not STGUARD:
        pytest.skip("STGUARD_CLI is not set (run through ctest)")
    path = tmp_path_factory.mktemp("gather") / "views.pt"
    torch.save(views(), path)
    return path


def test_convert_gathers_like_torch_load_in_linear_time(checkpoint, tmp_path):
    assert os.path.getsize(checkpoint) < 300_000
    out = tmp_path / "views.safetensors"
    started = time.monotonic()
    subprocess.run([STGUARD, "convert", str(checkpoint), str(out)], check=True,
                   capture_output=True)
    seconds = time.monotonic() - started
    print("convert of %d bytes: %.2f s" % (os.path.getsize(checkpoint), seconds))
    assert seconds <= SECONDS
    converted = read_safetensors(out)
    expected = torch.load(checkpoint)
    assert sorted(converted) == sorted(expected)
    for name, tensor in expected.items():
        dtype, shape, data = converted[name]
        assert shape == list(tensor.shape), name
        assert data == torch_bytes(tensor), name
