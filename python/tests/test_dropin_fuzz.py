# SPDX-License-Identifier: Apache-2.0
"""Random mutations of valid files through the pread backend and _safe_open_handle never
crash the interpreter and raise nothing but SafetensorError (run in a child interpreter,
so a crash is its exit status)."""

import os
import subprocess
import sys

from conftest import CORPUS

CHILD = r'''
import os, random, sys, tempfile
import stguard

seed, count, *sources = sys.argv[1:]
rng = random.Random(int(seed))
originals = [open(p, "rb").read() for p in sources]
path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
outcomes = {"ok": 0, "error": 0}

def mutate(data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(4)
        if kind == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 1 and data:
            at = rng.randrange(len(data)); del data[at:at + rng.randint(1, 8)]
        elif kind == 2 and len(data) >= 8:
            n = rng.choice([0, 8, len(data) - 8, len(data), 2**63, rng.randrange(2**32)])
            data[0:8] = (n % 2**64).to_bytes(8, "little")
        elif kind == 3:
            del data[rng.randint(0, len(data)):]
    return bytes(data)

def use(f):
    for name, tensor in f.get_tensors().items():
        tensor.tobytes()
        part = f.get_slice(name)
        part[[]] if part.get_shape() else part[...]
    f.metadata(); f.offset_keys(); f.keys()

for i in range(int(count)):
    with open(path, "wb") as out:
        out.write(mutate(rng.choice(originals)))
    try:
        if i % 2:
            with stguard.safe_open(path, "np", backend="pread") as f:
                use(f)
        else:
            with open(path, "rb") as raw, stguard._safe_open_handle(raw, "np") as f:
                use(f)
        outcomes["ok"] += 1
    except stguard.SafetensorError as error:
        assert isinstance(error.code, str) and isinstance(error.offset, int)
        outcomes["error"] += 1
print(outcomes["ok"], outcomes["error"])
'''


def test_mutations_through_pread_and_handles_never_crash():
    sources = [str(p) for p in sorted((CORPUS / "valid").glob("*.safetensors"))]
    sources.append(str(CORPUS / "sample.safetensors"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-c", CHILD, "4321", "1500", *sources],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"child died with {done.returncode}: {done.stderr[-2000:]}"
    accepted, rejected = map(int, done.stdout.split())
    assert accepted + rejected == 1500 and accepted > 0 and rejected > 0
