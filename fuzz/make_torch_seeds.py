#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds for fuzz_pickle, fuzz_zip and fuzz_torch_checkpoint from corpus/torch (made by
tests/torch/make_fixtures.py): each file under its sha1, as the other corpora are named.

  fuzz/make_torch_seeds.py          (from the project root)
"""
import hashlib
import pathlib
import zipfile

root = pathlib.Path(__file__).resolve().parent.parent
source = root / "corpus" / "torch"
targets = {name: root / "corpus" / name for name in ("fuzz_pickle", "fuzz_zip", "fuzz_torch_checkpoint")}
for folder in targets.values():
    folder.mkdir(exist_ok=True)


def add(target, data, limit):
    if len(data) <= limit:
        (targets[target] / hashlib.sha1(data).hexdigest()).write_bytes(data)


for path in sorted(source.rglob("*")):
    if not path.is_file() or path.suffix == ".json":
        continue
    data = path.read_bytes()
    add("fuzz_torch_checkpoint", data, 16384)
    if data.startswith(b"PK\x03\x04"):
        add("fuzz_zip", data, 16384)
        try:
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    if info.filename.endswith("data.pkl"):
                        add("fuzz_pickle", z.read(info), 4096)
        except zipfile.BadZipFile:
            pass
    elif data.startswith(b"\x80"):
        add("fuzz_pickle", data, 4096)
for name, folder in targets.items():
    print(name, len(list(folder.iterdir())), "seeds")
