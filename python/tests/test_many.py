# SPDX-License-Identifier: Apache-2.0
"""check_many and scan_many: in order, the CLI's envelopes, on threads without the GIL."""

import json
import subprocess
import sys
import threading

import pytest

import stguard
from conftest import CORPUS

TORCH = CORPUS / "torch"


def mixed_inputs():
    paths = [CORPUS / "sample.safetensors", TORCH / "valid", CORPUS / "missing.bin"]
    paths += sorted((TORCH / "refuse").iterdir())[:5] + sorted((TORCH / "valid").iterdir())
    paths += sorted((CORPUS / "invalid").iterdir())[:5]
    return paths


def test_check_many_gives_the_clis_envelopes_in_input_order(cli):
    paths = mixed_inputs()
    results = stguard.check_many(paths, workers=3)
    run = subprocess.run([cli, "check", "--json", "--jobs", "1"] + [str(p) for p in paths],
                         capture_output=True, text=True)
    assert [json.loads(line) for line in run.stdout.splitlines()] == results
    assert [r["file"] for r in results] == [str(p) for p in paths]
    # One order of verdicts for everyone: the same verdicts as stguard.check gives.
    assert [r["verdict"] for r in results] == [stguard.check(p).verdict for p in paths]
    assert {r["verdict"] for r in results} == {"valid", "invalid", "refused", "error"}
    assert stguard.check_many(paths, workers=1) == results


def test_scan_many_flattens_folders_in_order(cli):
    paths = [TORCH / "valid" / "nested.zip.pt", TORCH / "valid", TORCH / "refuse"]
    results = stguard.scan_many(paths, workers=2, key=["module", "model"])
    run = subprocess.run([cli, "scan", "--json", "--key", "module", "--key", "model"] +
                         [str(p) for p in paths], capture_output=True, text=True)
    assert [json.loads(line) for line in run.stdout.splitlines()] == results
    assert results[0]["scan_verdict"] == "clean"  # the key selected its state dict
    assert len(results) > len(paths)


def test_workers_out_of_range_are_refused():
    with pytest.raises(ValueError, match="workers"):
        stguard.check_many([CORPUS / "sample.safetensors"], workers=0)
    assert stguard.check_many([]) == []


def test_check_many_releases_the_gil():
    """Another Python thread runs while check_many is inside the library.

    The profile hooks fire just before the C function starts and just after it returns,
    with no point between either hook and the call where the interpreter could hand the
    GIL over: so the spinning thread's counter can move between the two hooks only if
    the call released the GIL. Held, it never moves, however long the call: the test
    then fails after its last, largest call, whatever the machine's speed. Released, the
    waiting thread takes the GIL at once; each retry doubles the work in case the call
    ends before that thread is woken.
    """
    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    moved = []

    def profile(frame, event, arg):
        if getattr(arg, "__name__", "") != "_check_many_json":
            return
        if event == "c_call":
            moved.append(counter[0])
        elif event == "c_return":
            moved[-1] = counter[0] - moved[-1]

    spinner = threading.Thread(target=spin)
    spinner.start()
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        paths = [CORPUS / "sample.safetensors"] * 256
        for _ in range(8):
            sys.setprofile(profile)
            try:
                stguard.check_many(paths, workers=2)
            finally:
                sys.setprofile(None)
            if moved[-1] > 0:
                break
            paths = paths * 2
    finally:
        sys.setswitchinterval(previous)
        stop.set()
        spinner.join()
    assert moved and moved[-1] > 0, moved
