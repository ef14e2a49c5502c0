# SPDX-License-Identifier: Apache-2.0
"""The pickle machine's bound (src/pickle/pickle_reader.h, BOUNDS): whatever a torch
checkpoint's pickle shares through its memo, `stguard scan` and `stguard convert` reach
their verdict with peak memory at most kPeakBytesPerPickleByte (128) x the pickle's bytes
plus 64 MiB, in time linear in it (asserted: at most 5 s for 1 MB, about 0.7 s measured).

Each shape of tests/torch/make_hostile_pickles.py (about 1 MB of pickle) runs as its own
child process; its peak is the child's ru_maxrss (os.wait4), and the file is written by
another child so that this process stays small (Linux starts a child's ru_maxrss at its
parent's size). The children run under a 4 GiB address-space limit and a 60 s timeout so
that a regression fails the test instead of the machine: before values were charged, a
size tuple memoised once and used by every tensor took 1.9 GB and 16 s for 100 KB of
pickle, and ran out of memory at 200 KB. Run by ctest in the ordinary build only
(sanitizers multiply memory)."""
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile

import pytest

STGUARD = os.environ.get("STGUARD_CLI", "")
GENERATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_hostile_pickles.py")
PICKLE_BYTES = 1_000_000
PEAK_BYTES_PER_PICKLE_BYTE = 128  # kPeakBytesPerPickleByte
PEAK_FIXED = 64 << 20
SECONDS = 5.0
ADDRESS_LIMIT = 4 << 30
TIMEOUT = 60

# shape -> (exit status, what the verdict says)
SHAPES = {
    "memo_reduce": (1, "PickleBadArguments"),  # copies refused at the budget
    "tied_names": (1, "OutputTooLarge"),  # the names' shapes refused at the budget
    "nested_tuples": (1, "NotAStateDict"),  # shared, never expanded
    "list_of_gets": (1, "NotAStateDict"),
    "reduce_big_args": (1, "PickleBadArguments"),
    "memoize_values": (1, "PickleCorrupt"),
    "shared_location": (1, "PickleBadArguments"),  # one location string, many storages  # the most values and memo entries per byte
    "tied_within_budget": (0, ""),  # accepted: copies just under the budget
    "many_scalars": (0, ""),  # accepted: the most tensors per byte
}

# `scan --require-convertible` exits 1 exactly when convert refuses (plain scan exits 0 on
# a safe file that needs a state dict, NotAStateDict).
COMMANDS = [["scan", "--require-convertible", "{file}"], ["convert", "{file}", "{out}"]]


@pytest.fixture(scope="module")
def workdir():
    if not STGUARD:
        pytest.skip("STGUARD_CLI is not set (run through ctest)")
    with tempfile.TemporaryDirectory(prefix="stguard-pickle-bounds-") as path:
        yield path


def limit_child():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def run_child(args, log_path):
    """Exit status, peak RSS in bytes and wall seconds of one child (killed at TIMEOUT)."""
    with open(log_path, "wb") as log:
        started = time.monotonic()
        proc = subprocess.Popen(args, stdout=log, stderr=log, preexec_fn=limit_child)
        deadline = started + TIMEOUT
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return proc.returncode, usage.ru_maxrss * 1024, time.monotonic() - started


def pickle_length(path):
    with zipfile.ZipFile(path) as archive:
        return archive.getinfo("archive/data.pkl").file_size


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_verdict_within_linear_bound(shape, workdir):
    path = os.path.join(workdir, shape + ".pt")
    out = os.path.join(workdir, shape + ".safetensors")
    log = os.path.join(workdir, shape + ".log")
    subprocess.run([sys.executable, GENERATOR, shape, path, str(PICKLE_BYTES)], check=True)
    length = pickle_length(path)
    assert length >= PICKLE_BYTES * 0.9
    bound = PEAK_BYTES_PER_PICKLE_BYTE * length + PEAK_FIXED
    want_status, want_text = SHAPES[shape]
    for command in COMMANDS:
        args = [STGUARD] + [a.format(file=path, out=out) for a in command]
        status, peak, seconds = run_child(args, log)
        with open(log, "rb") as f:
            said = f.read(2000).decode(errors="replace")
        print("%s %s: status %d, peak %.1f MB (%.0f bytes per pickle byte), %.2f s"
              % (shape, command[0], status, peak / 1e6, peak / length, seconds))
        assert peak <= bound, (shape, command[0], peak, bound)
        assert seconds <= SECONDS, (shape, command[0], seconds)
        assert status == want_status, (shape, command[0], status, said)
        assert want_text in said, (shape, command[0], said)
        if os.path.exists(out):
            os.unlink(out)
    os.unlink(path)
