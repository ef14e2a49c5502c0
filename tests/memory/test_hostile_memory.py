# SPDX-License-Identifier: Apache-2.0
"""Whatever a header holds, every command's peak memory beyond the
header's own N bytes stays below 2N.

Three hostile header shapes (each about 40 MB of header and no data): 2.4 million metadata
entries, one tensor with 20 million shape dimensions, 0.7 million zero-size tensors. Each
command runs as its own child; its peak is that child's ru_maxrss (os.wait4). Linux starts
a child's ru_maxrss at its parent's size, so the files are written by another child and
this process stays far below N. Before the
compact Shape/MetadataList and the streamed commands, these gave 3.4N to 12N. Run by ctest
in the ordinary build only (sanitizers multiply memory)."""
import os
import struct
import subprocess
import sys
import tempfile

import pytest

STGUARD = os.environ.get("STGUARD_CLI", "")
BOUND = 2.0  # peak RSS beyond N, in units of N
TARGET_N = 40_000_000


def write_file(path, header):
    header = header.encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
    return len(header)


def metadata_shape(count):
    entries = ",".join('"%08x":"v"' % i for i in range(count))
    return '{"__metadata__":{%s}}' % entries


def dims_shape(rank):
    return '{"a":{"dtype":"U8","shape":[%s],"data_offsets":[0,0]}}' % ",".join(["0"] * rank)


def zero_size_shape(count):
    entries = ",".join('"t%07d":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}' % i
                       for i in range(count))
    return "{%s}" % entries


SHAPES = {
    "metadata": lambda: metadata_shape(TARGET_N // 15),
    "dims": lambda: dims_shape(TARGET_N // 2),
    "zero_size": lambda: zero_size_shape(TARGET_N // 57),
}

COMMANDS = [
    ["check"], ["inspect"], ["inspect", "--json"], ["inspect", "--stats"],
    ["check", "--canonical"], ["canon", "{file}", "{out}"],
    ["convert", "{file}", "{out}", "--dtype", "F16"],
]


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="stguard-memory-") as path:
        yield path


def peak_kib(args):
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(args, stdout=sink, stderr=sink)
        _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_command_stays_below_2n(shape, workdir):
    path = os.path.join(workdir, shape + ".safetensors")
    out = os.path.join(workdir, shape + ".out.safetensors")
    subprocess.run([sys.executable, __file__, shape, path], check=True)
    n = os.path.getsize(path) - 8
    assert n > TARGET_N * 0.9
    assert subprocess.run([STGUARD, "check", path], capture_output=True).returncode == 0
    for command in COMMANDS:
        args = [STGUARD] + [a.format(file=path, out=out) for a in command]
        if "{file}" not in command:
            args.append(path)
        status, kib = peak_kib(args)
        # 0: valid; 1: check --canonical says these files are not canonical.
        assert status in (0, 1), (command, status)
        beyond = (kib * 1024 - n) / n
        print("%s %s: %.2fN" % (shape, " ".join(command), beyond))
        assert beyond < BOUND, (command, beyond)
        if os.path.exists(out):
            os.unlink(out)
    os.unlink(path)


if __name__ == "__main__":  # the writer child: SHAPE PATH
    write_file(sys.argv[2], SHAPES[sys.argv[1]]())
