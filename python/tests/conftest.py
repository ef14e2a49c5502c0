# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for the stguard Python tests.

The tests import whichever `stguard` is on sys.path: the build tree's copy under ctest
(PYTHONPATH=build/python), the installed copy in a venv. STGUARD_CLI names the stguard
command for the tests that compare with it; else build/stguard in the checkout is used.
"""

import os
import shutil
import struct
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"


def cli_path():
    """Returns the stguard command, or None when it is not built."""
    for candidate in (os.environ.get("STGUARD_CLI"), str(REPO / "build" / "stguard"),
                      shutil.which("stguard")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture
def cli():
    path = cli_path()
    if path is None:
        pytest.skip("the stguard command is not built (set STGUARD_CLI)")
    return path


def raw_file(header: str, data: bytes = b"") -> bytes:
    """Returns a safetensors file with exactly this header text (no padding added)."""
    encoded = header.encode("utf-8")
    return struct.pack("<Q", len(encoded)) + encoded + data


def mapped_rss(path) -> int:
    """Returns the bytes of `path`'s mappings resident in this process (from smaps)."""
    target = os.path.realpath(path)
    total = 0
    current = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and len(fields[0]) > 1 and "-" in fields[0] and not fields[0].endswith(":"):
                current = len(fields) >= 6 and fields[5] == target
            elif current and fields and fields[0] == "Rss:":
                total += int(fields[1]) * 1024
    return total


def is_mapped(path) -> bool:
    """Says whether `path` is mapped into this process."""
    target = os.path.realpath(path)
    with open("/proc/self/maps") as maps:
        return any(line.rstrip("\n").endswith(" " + target) for line in maps)


def drop_cached_pages(path) -> None:
    """Asks the kernel to forget `path`'s cached pages, so that reading them again is a
    real read, page by page. (Pages just written sit in the cache as large folios, which
    a fault maps whole: up to 2 MiB at a time, however little was touched.) Skips the
    test on tmpfs, where the cache is the only copy and cannot be dropped."""
    target = os.path.realpath(path)
    best, fs_type = "", ""
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            mount_point = fields[1]
            if (target == mount_point or target.startswith(mount_point.rstrip("/") + "/")) \
                    and len(mount_point) >= len(best):
                best, fs_type = mount_point, fields[2]
    if fs_type in ("tmpfs", "ramfs"):
        pytest.skip(f"{path} is on {fs_type}: its pages cannot be dropped")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
