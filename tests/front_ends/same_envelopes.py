#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The same 40 inputs through every front end give the same envelope.

The inputs cover every format (safetensors, PyTorch ZIP and legacy, bare pickle, tar, a ZIP
that is neither, GGUF, npy, npz, JSON text, unknown bytes, an empty file), folders (valid,
refused, a missing shard, mixed formats, empty, an index file) and a path that does not
exist; valid, invalid, refused and error verdicts. Each is judged by

  - the CLI: `stguard check --json PATH...` (one process, one line per path, in order);
  - the C API: stguard_check_path and stguard_result_json, from a C99 program
    (`tests/capi/capi_check_c99_test.c --json PATH...`);
  - Python: stguard.check(PATH), its envelope fields;
  - the WebAssembly glue under node (tests/web/node_envelopes.js): a file through a byte
    source, a folder through the module's file system. Skipped, saying so, when node or
    build-web/stguard.js is absent (tools/build-web.sh builds it); the path that does not
    exist is not given to it (a page is only ever given files that exist).

The envelope is schema_version, file, format, verdict, and when not valid code, message,
offset (only when it points into a file), member (inside a folder), tensor: the JSON front
ends must print those keys in that order with equal values; Python's fields (None for a key
the JSON leaves out, "" for no member) must hold the same values.

Usage: same_envelopes.py REPO STGUARD_CLI CAPI_CHECK_C99_TEST PYTHONPATH BUILD_WEB
(PYTHONPATH "none" when the Python module is not built: that part is skipped, saying so.)
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ENVELOPE = ["schema_version", "file", "format", "verdict", "code", "message", "offset",
            "member", "tensor"]


def npy_bytes(descr, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }" % descr
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def copy(source, target):
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(source, target)
    return target


def tar_bytes():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        member = tarfile.TarInfo("storages")
        member.size = 4
        archive.addfile(member, io.BytesIO(b"\0\0\0\0"))
    return out.getvalue()


def zip_bytes():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("model/keras_metadata.txt", "not a checkpoint")
    return out.getvalue()


def inputs(repo, tmp):
    """The 40 paths, absolute."""
    corpus = os.path.join(repo, "corpus")
    conf = os.path.join(repo, "conformance")
    torch = os.path.join(corpus, "torch")
    files = [
        # safetensors: valid, invalid with an offset and a tensor, implementation-defined
        os.path.join(corpus, "valid", "worked_example.safetensors"),
        os.path.join(corpus, "valid", "every_dtype.safetensors"),
        os.path.join(corpus, "invalid", "DuplicateKey__tensor_twice.safetensors"),
        os.path.join(conf, "safetensors", "n_dtype_BF16_size_plus_one.safetensors"),
        os.path.join(conf, "safetensors", "i_metadata_not_object__null.safetensors"),
        # PyTorch ZIP and legacy, bare pickles, tar-shaped: valid, refused, invalid
        os.path.join(torch, "valid", "dtypes.zip.pt"),
        os.path.join(torch, "valid", "dtypes.legacy.pt"),
        os.path.join(torch, "refuse", "PickleGlobalRefused__zip_os_system.pt"),
        os.path.join(torch, "refuse", "PickleGlobalRefused__legacy_os_system.pt"),
        os.path.join(torch, "refuse", "PickleGlobalRefused__raw_os_system.pt"),
        os.path.join(torch, "refuse", "RawPickle__raw_clean_pickle.pt"),
        os.path.join(torch, "refuse", "TarAmbiguous__tar_shaped_legacy.pt"),
        os.path.join(torch, "refuse", "ZipChecksum__bad_crc.pt"),
        os.path.join(torch, "refuse", "UnexpectedEnd__legacy_truncated.pt"),
        os.path.join(torch, "refuse", "NotATorchCheckpoint__text.pt"),
        os.path.join(conf, "pytorch", "n_constants_pkl.pt"),
        # GGUF
        os.path.join(conf, "gguf", "y_alignment_16.gguf"),
        os.path.join(conf, "gguf", "n_alignment_0.gguf"),
        os.path.join(corpus, "gguf", "refuse", "GgufBadMagic__bad_magic.gguf"),
        os.path.join(corpus, "gguf", "refuse", "GgufBlockMismatch__row_not_whole_blocks.gguf"),
        # npy and npz
        os.path.join(conf, "npy", "y_dtype_be_f4.npy"),
        os.path.join(conf, "npy", "n_code_in_header.npy"),
        os.path.join(conf, "npy", "n_object_dtype.npy"),
        os.path.join(conf, "npz", "y_deflated_member.npz"),
        os.path.join(conf, "npz", "y_empty_archive.npz"),
        os.path.join(conf, "npz", "n_bad_crc.npz"),
        # generated: a tar, a ZIP that is neither, JSON text, unknown bytes, an empty file
        write(os.path.join(tmp, "files", "archive.tar"), tar_bytes()),
        write(os.path.join(tmp, "files", "keras.zip"), zip_bytes()),
        write(os.path.join(tmp, "files", "config.txt"), b'{"model_type": "llama"}'),
        write(os.path.join(tmp, "files", "noise.bin"), b"hello, this is no checkpoint\n"),
        write(os.path.join(tmp, "files", "empty.safetensors"), b""),
    ]
    valid_st = files[0]
    good = os.path.join(tmp, "good")
    copy(valid_st, os.path.join(good, "model.safetensors"))
    evil = os.path.join(tmp, "evil")
    copy(valid_st, os.path.join(evil, "model.safetensors"))
    copy(files[9], os.path.join(evil, "sub", "extra.pt"))
    no_shard = os.path.join(tmp, "no_shard")
    write(os.path.join(no_shard, "model.safetensors.index.json"),
          b'{"metadata":{},"weight_map":{"t":"model-00001-of-00001.safetensors"}}')
    mixed = os.path.join(tmp, "mixed")
    copy(files[16], os.path.join(mixed, "model.gguf"))
    copy(files[20], os.path.join(mixed, "array.npy"))
    copy(files[23], os.path.join(mixed, "arrays.npz"))
    broken_member = os.path.join(tmp, "broken_member")
    copy(valid_st, os.path.join(broken_member, "model.safetensors"))
    copy(files[21], os.path.join(broken_member, "bad.npy"))
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    sharded = os.path.join(torch, "valid", "sharded")
    folders = [sharded, os.path.join(sharded, "pytorch_model.bin.index.json"), good, evil,
               no_shard, mixed, broken_member, empty]
    return files + folders


def json_envelope(line):
    """The envelope's keys of one JSON line, in the order printed."""
    value = json.loads(line)
    return [(key, value[key]) for key in value if key in ENVELOPE]


def cli_envelopes(cli, paths):
    run = subprocess.run([cli, "check", "--json", *paths], capture_output=True, text=True,
                         timeout=120)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    if len(lines) != len(paths):
        raise AssertionError(f"CLI printed {len(lines)} lines for {len(paths)} paths: "
                             f"{run.stdout}{run.stderr}")
    return [json_envelope(line) for line in lines]


def capi_envelopes(printer, paths):
    # It exits with the worst verdict's status, as the CLI does: only the lines matter here.
    run = subprocess.run([printer, "--json", *paths], capture_output=True, text=True,
                         timeout=120)
    return [json_envelope(line) for line in run.stdout.splitlines()]


def python_envelopes(pythonpath, paths):
    sys.path.insert(0, pythonpath)
    import stguard  # noqa: E402 (the module built in this tree)
    out = []
    for path in paths:
        result = stguard.check(path)
        fields = {key: getattr(result, key) for key in ENVELOPE}
        out.append({key: value for key, value in fields.items()
                    if value is not None and not (key == "member" and value == "")})
    return out


def node_envelopes(repo, build_web, paths):
    script = os.path.join(repo, "tests", "web", "node_envelopes.js")
    run = subprocess.run(["node", "--no-experimental-fetch", script, build_web, *paths],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise AssertionError(f"node_envelopes.js: exit {run.returncode}: {run.stderr}")
    return [json_envelope(line) for line in run.stdout.splitlines()]


def compare(name, gots, expecteds, paths, failures):
    """Each of `gots` against the CLI's envelope of the same path (as a dict for Python)."""
    if len(gots) != len(paths):
        failures.append(f"{name}: {len(gots)} envelopes for {len(paths)} paths")
    for path, got, expected in zip(paths, gots, expecteds):
        if got != (dict(expected) if isinstance(got, dict) else expected):
            failures.append(f"{path}:\n  CLI    {expected}\n  {name:6} {got}")


def main():
    repo, cli_path, printer, pythonpath, build_web = sys.argv[1:6]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = inputs(repo, tmp) + [os.path.join(tmp, "does-not-exist.safetensors")]
        assert len(paths) == 40, len(paths)
        missing = [p for p in paths[:-1] if not os.path.exists(p)]
        assert not missing, f"inputs missing from the tree: {missing}"
        cli = cli_envelopes(cli_path, paths)
        verdicts = {}
        for path, envelope in zip(paths, cli):
            fields = dict(envelope)
            verdicts[fields["verdict"]] = verdicts.get(fields["verdict"], 0) + 1
            if fields.get("file") != path:
                failures.append(f"{path}: the CLI's line is about {fields.get('file')}")
        # The inputs must cover every verdict and every format word, or they test less
        # than they say.
        formats = {dict(e)["format"] for e in cli}
        assert set(verdicts) == {"valid", "invalid", "refused", "error"}, verdicts
        for word in ("safetensors", "pytorch-zip", "pytorch-legacy", "pickle", "tar", "zip",
                     "gguf", "npy", "npz", "json", "unknown", "folder"):
            assert word in formats, f"no input of format {word}: {sorted(formats)}"
        compare("C API", capi_envelopes(printer, paths), cli, paths, failures)
        if pythonpath != "none":
            compare("Python", python_envelopes(pythonpath, paths), cli, paths, failures)
            print(f"python: {len(paths)} envelopes compared")
        else:
            print("SKIPPED python: the Python module is not built in this tree")
        if shutil.which("node") and os.path.isfile(os.path.join(build_web, "stguard.js")):
            # The page is never given a path that does not exist: the last one is left out.
            compare("node", node_envelopes(repo, build_web, paths[:-1]), cli, paths[:-1],
                    failures)
            print(f"node: {len(paths) - 1} envelopes compared")
        else:
            print(f"SKIPPED node glue: node or {build_web}/stguard.js is missing "
                  "(tools/build-web.sh builds it)")
    for failure in failures:
        print("FAIL", failure)
    print(f"{'FAILED' if failures else 'ok'}: {len(paths)} inputs, verdicts {verdicts}, "
          f"the same envelope from every front end run")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
