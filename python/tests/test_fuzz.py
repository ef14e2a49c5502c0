# SPDX-License-Identifier: Apache-2.0
"""Random mutations of valid files through safe_open, load and get_slice never crash the
interpreter and never raise anything but SafetensorError. The mutations run in a child
interpreter, so a segfault or abort shows up as its exit status instead of killing pytest."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import CORPUS

CHILD = r'''
import random, sys, tempfile, os
import numpy as np
import stguard, stguard.numpy as snp

seed, count, *sources = sys.argv[1:]
rng = random.Random(int(seed))
originals = [open(p, "rb").read() for p in sources]
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "m.safetensors")
outcomes = {"ok": 0, "error": 0}

def mutate(data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        if kind == 0 and data:                      # flip a byte
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 1 and data:                    # delete a run
            at = rng.randrange(len(data)); del data[at:at + rng.randint(1, 8)]
        elif kind == 2:                             # insert bytes from the JSON alphabet
            at = rng.randint(0, len(data))
            data[at:at] = bytes(rng.choice(b'{}[]":,0123456789 \\eE-.ntfu') for _ in range(rng.randint(1, 6)))
        elif kind == 3 and len(data) >= 8:          # change the length prefix
            n = rng.choice([0, 1, 7, 8, len(data) - 8, len(data), 2**63, 2**64 - 1, rng.randrange(2**32)])
            data[0:8] = (n % 2**64).to_bytes(8, "little")
        elif kind == 4:                             # truncate
            del data[rng.randint(0, len(data)):]
        elif kind == 5 and data:                    # touch a digit: shapes and offsets
            digits = [i for i, b in enumerate(data[:256]) if 48 <= b <= 57]
            if digits:
                data[rng.choice(digits)] = rng.choice(b"0123456789")
    return bytes(data)

def use(f):
    for name in f.keys():
        array = f.get_tensor(name)
        array.tobytes()
        part = f.get_slice(name)
        shape = part.get_shape()
        if shape and shape[0] > 0:
            part[0]
        part[...]
    f.metadata(); f.offset_keys()

for i in range(int(count)):
    data = mutate(rng.choice(originals))
    with open(path, "wb") as out:
        out.write(data)
    try:
        with stguard.safe_open(path, "np") as f:
            use(f)
        snp.load(data)
        stguard.check(path)
        outcomes["ok"] += 1
    except stguard.SafetensorError as error:
        assert isinstance(error.code, str) and isinstance(error.offset, int)
        outcomes["error"] += 1
print(outcomes["ok"], outcomes["error"])
'''


def test_mutations_never_crash(tmp_path):
    sources = [str(p) for p in sorted((CORPUS / "valid").glob("*.safetensors"))]
    sources.append(str(CORPUS / "sample.safetensors"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-c", CHILD, "1234", "3000", *sources],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"child died with {done.returncode}: {done.stderr[-2000:]}"
    accepted, rejected = map(int, done.stdout.split())
    assert accepted + rejected == 3000
    assert accepted > 0 and rejected > 0  # the mutations exercise both sides
