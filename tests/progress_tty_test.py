#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""progress_tty_test.py PAUSING_CLI: the progress line of long commands.

It shows on stderr only when stderr is a terminal (here a pseudo-terminal from the `pty`
module), never when stderr is piped, never with --json, never with -q. The bar appears
only once work has run for a second; to make the work "long" without a large file, the
tests' pausing CLI (src/base/test_pause.h) holds the process at a pause point for 1.5 s
first. Commands covered: inspect --stats, check DIR, convert --dtype of a safetensors
file and of a safetensors folder, convert of an .npy file, and convert of a torch file (skipped, saying so, without torch), each convert also
with --json.
"""

import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOLD_SECONDS = 1.5


def run(cli, arguments, pause_at, stderr_is_terminal, directory):
    """Runs the pausing CLI held at `pause_at` for HOLD_SECONDS; returns (status, stderr)."""
    marker = Path(directory) / "paused"
    env = dict(os.environ, STGUARD_TEST_PAUSE_AT=pause_at, STGUARD_TEST_PAUSE_FILE=str(marker))
    if stderr_is_terminal:
        master, slave = pty.openpty()
        process = subprocess.Popen([cli, *arguments], stdout=subprocess.DEVNULL, stderr=slave,
                                   env=env)
        os.close(slave)
    else:
        process = subprocess.Popen([cli, *arguments], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert process.poll() is None, f"{arguments} ended before its pause point {pause_at}"
        assert time.monotonic() < deadline, f"{arguments} never reached {pause_at}"
        time.sleep(0.01)
    time.sleep(HOLD_SECONDS)
    marker.unlink()
    if not stderr_is_terminal:
        _, err = process.communicate(timeout=60)
        return process.returncode, err.decode("utf-8", "replace")
    output = b""
    while True:  # read the terminal until the process has exited and it is drained
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=60)
    os.close(master)
    return process.returncode, output.decode("utf-8", "replace")


def write_sample(path):
    """A safetensors file of 8 MiB of F32 zeros: more than one progress report."""
    n = 2 << 20
    header = ('{"t":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n, 4 * n)).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + 4 * n)


def is_bar(text):
    return "/s" in text and "\r" in text


def main():
    cli = sys.argv[1]
    failures = []

    def expect(condition, what, output):
        print(("ok: " if condition else "FAIL: ") + what)
        if not condition:
            failures.append(what)
            print("  stderr was: %r" % output)

    with tempfile.TemporaryDirectory() as directory:
        sample = os.path.join(directory, "big.safetensors")
        write_sample(sample)
        stats = ["inspect", "--stats", sample]
        status, err = run(cli, stats, "data", True, directory)
        expect(status == 0 and is_bar(err) and "ETA" in err and "8.0 MiB" in err,
               "inspect --stats draws a bar on a terminal", err)
        expect(err.rstrip("\n").endswith("\x1b[K") or "\r\x1b[K" in err,
               "the bar is erased when the scan ends", err)
        status, err = run(cli, stats, "data", False, directory)
        expect(status == 0 and not is_bar(err) and err == "",
               "inspect --stats draws nothing when stderr is piped", err)
        status, err = run(cli, ["inspect", "--stats", "--json", sample], "data", True, directory)
        expect(status == 0 and not is_bar(err), "inspect --stats --json draws nothing", err)

        check_folder_cases(cli, directory, sample, expect)
        convert_dtype_cases(cli, directory, sample, expect)
        convert_npy_and_folder_cases(cli, directory, sample, expect)

        # A torch file of 16 MiB: its output passes through the writer's buffer in several
        # writes, so the pause point "written" comes before the last of them.
        try:
            import torch
        except ImportError:
            print("SKIPPED: convert's progress: torch is not installed (python3-torch)")
            torch = None
        if torch is None:
            return finish(failures)
        torch_file = os.path.join(directory, "big.pt")
        torch.save({"weight": torch.zeros(4 << 20)}, torch_file)
        out = os.path.join(directory, "out.safetensors")
        status, err = run(cli, ["convert", torch_file, out], "written", True, directory)
        expect(status == 0 and is_bar(err), "convert draws a bar on a terminal", err)
        os.unlink(out)
        status, err = run(cli, ["convert", torch_file, out], "written", False, directory)
        expect(status == 0 and not is_bar(err), "convert draws nothing when stderr is piped",
               err)
        os.unlink(out)
        status, err = run(cli, ["convert", "--json", torch_file, out], "written", True,
                          directory)
        expect(status == 0 and err == "", "convert --json draws nothing on a terminal", err)
    finish(failures)


def check_folder_cases(cli, directory, sample, expect):
    """check DIR: the pause is at the first shard's header; the folder's bytes follow."""
    folder = os.path.join(directory, "model")
    os.mkdir(folder)
    os.link(sample, os.path.join(folder, "model.safetensors"))
    status, err = run(cli, ["check", folder], "header", True, directory)
    expect(status == 0 and is_bar(err) and "8.0 MiB" in err,
           "check DIR draws a bar on a terminal", err)
    status, err = run(cli, ["check", "-q", folder], "header", True, directory)
    expect(status == 0 and err == "", "check -q DIR draws nothing on a terminal", err)
    status, err = run(cli, ["check", "--json", folder], "header", True, directory)
    expect(status == 0 and not is_bar(err), "check --json DIR draws nothing", err)
    status, err = run(cli, ["check", folder], "header", False, directory)
    expect(status == 0 and err == "", "check DIR draws nothing when stderr is piped", err)


def convert_dtype_cases(cli, directory, sample, expect):
    """convert --dtype of a safetensors file: the pause is after its first write."""
    out = os.path.join(directory, "bf16.safetensors")
    status, err = run(cli, ["convert", sample, out, "--dtype", "BF16"], "written", True,
                      directory)
    expect(status == 0 and is_bar(err), "convert --dtype draws a bar on a terminal", err)
    os.unlink(out)
    status, err = run(cli, ["convert", sample, out, "--dtype", "BF16"], "written", False,
                      directory)
    expect(status == 0 and err == "", "convert --dtype draws nothing when stderr is piped",
           err)
    os.unlink(out)
    status, err = run(cli, ["convert", "--json", sample, out, "--dtype", "BF16"], "written",
                      True, directory)
    expect(status == 0 and err == "", "convert --json --dtype draws nothing on a terminal", err)
    os.unlink(out)


def write_npy(path):
    """An .npy of 8 MiB of float32 zeros."""
    n = 2 << 20
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.truncate(10 + len(header) + 4 * n)


def convert_npy_and_folder_cases(cli, directory, sample, expect):
    """convert of an .npy file and of a safetensors folder: a bar on a terminal only."""
    npy = os.path.join(directory, "big.npy")
    write_npy(npy)
    out = os.path.join(directory, "npy.safetensors")
    status, err = run(cli, ["convert", npy, out], "written", True, directory)
    expect(status == 0 and is_bar(err), "convert of an .npy draws a bar on a terminal", err)
    os.unlink(out)
    status, err = run(cli, ["convert", "--json", npy, out], "written", True, directory)
    expect(status == 0 and err == "", "convert --json of an .npy draws nothing", err)
    folder = os.path.join(directory, "st_model")
    os.mkdir(folder)
    os.link(sample, os.path.join(folder, "model.safetensors"))
    status, err = run(cli, ["convert", folder, os.path.join(directory, "f16"), "--dtype", "F16"],
                      "written", True, directory)
    expect(status == 0 and is_bar(err), "convert of a safetensors folder draws a bar", err)


def finish(failures):
    if failures:
        sys.exit(f"{len(failures)} failed")


if __name__ == "__main__":
    main()
