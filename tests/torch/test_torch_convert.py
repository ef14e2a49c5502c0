# SPDX-License-Identifier: Apache-2.0
"""End-to-end: stguard converts real torch.save checkpoints to exactly what torch.load gives,
and refuses malicious or lying ones with their own error, writing nothing.

Run by ctest (tests/CMakeLists.txt) as /usr/bin/python3 -m pytest with STGUARD_CLI set to the
built binary and STGUARD_TORCH_CORPUS to corpus/torch (made by make_fixtures.py). Large
checkpoints are generated into a temporary folder at test time.
"""
import json
import os
import pathlib
import struct
import subprocess
import sys

import numpy
import pytest
import torch

CLI = os.environ["STGUARD_CLI"]
CORPUS = pathlib.Path(os.environ["STGUARD_TORCH_CORPUS"])
HERE = pathlib.Path(__file__).resolve().parent

ST_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
             "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
             "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool,
             "C64": torch.complex64}


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def read_safetensors(path):
    """An independent reader: header JSON and raw bytes per tensor (no stguard code)."""
    data = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        out[name] = (entry["dtype"], entry["shape"], body[begin:end])
    return meta, out


def torch_bytes(tensor):
    t = tensor.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def expected_tensors(path, keys=()):
    obj = torch.load(path, map_location="cpu")
    for key in keys:
        obj = obj[key]
    return obj


def assert_same(converted, expected):
    assert set(converted) == set(expected), (set(converted) ^ set(expected))
    for name, tensor in expected.items():
        dtype, shape, raw = converted[name]
        assert ST_DTYPES[dtype] == tensor.dtype, name
        assert shape == list(tensor.shape), name
        assert raw == torch_bytes(tensor), name
        # And torch itself reads the bytes back to an equal tensor.
        if tensor.numel() > 0:
            back = torch.frombuffer(bytearray(raw), dtype=tensor.dtype).reshape(tensor.shape)
            assert torch.equal(back, tensor.detach()), name


def valid_files(folder):
    return sorted(p for p in (folder / "valid").glob("*.pt"))


@pytest.fixture(scope="session")
def large_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("large")
    subprocess.run([sys.executable, str(HERE / "make_fixtures.py"), str(folder), "--large"],
                   check=True, capture_output=True)
    return folder


def keys_for(path):
    """The --key path to the state dict, as torch.load's result is indexed."""
    if path.name.startswith("training"):
        return ["state_dict"]
    if path.name.startswith("nested"):
        return ["module", "model"]
    return []


def key_options(keys):
    return [arg for key in keys for arg in ("--key", key)]


@pytest.mark.parametrize("path", valid_files(CORPUS), ids=lambda p: p.name)
def test_converts_like_torch_load(path, tmp_path):
    out = tmp_path / "out.safetensors"
    keys = keys_for(path)
    result = run("convert", path, out, *key_options(keys))
    assert result.returncode == 0, result.stderr
    meta, converted = read_safetensors(out)
    assert meta == {"format": "pt"}
    assert_same(converted, expected_tensors(path, keys))
    assert run("check", out).returncode == 0
    scan = run("scan", "--json", *key_options(keys), path)
    assert scan.returncode == 0, scan.stdout
    report = json.loads(scan.stdout)
    assert report["ok"] and report["verdict"] == "valid" and report["torch_format"] in ("zip", "legacy")
    assert report["format"] in ("pytorch-zip", "pytorch-legacy") and report["schema_version"] == 2
    assert all(g["allowed"] for g in report["globals"])


def test_large_checkpoints(large_corpus, tmp_path):
    for path in (large_corpus / "valid").glob("large*.pt"):
        out = tmp_path / (path.stem + ".safetensors")
        result = run("convert", path, out)
        assert result.returncode == 0, result.stderr
        assert_same(read_safetensors(out)[1], expected_tensors(path))


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_torch2_new_dtypes(fmt, tmp_path):
    # torch 2.x's _rebuild_tensor_v3 on untyped storages (corpus/torch/torch2, made by
    # make_torch2_fixtures.py; torch 1.13 cannot load them, so the bytes are stated here).
    path = CORPUS / "torch2" / f"new_dtypes.{fmt}.pt"
    assert run("scan", path).returncode == 0
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    assert result.returncode == 0, result.stderr
    meta, tensors = read_safetensors(out)
    assert meta == {"format": "pt"}
    assert tensors == {
        "fp8.e4m3": ("F8_E4M3", [3, 4], bytes(range(12))),
        "fp8.e4m3.t": ("F8_E4M3", [4, 3], bytes([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])),
        "fp8.e5m2": ("F8_E5M2", [6], bytes(range(100, 106))),
        "u16": ("U16", [2, 3], struct.pack("<6H", 1, 2, 3, 65534, 65535, 7)),
        "u16.row1": ("U16", [3], struct.pack("<3H", 65534, 65535, 7)),
        "u32": ("U32", [2], struct.pack("<2I", 4000000000, 5)),
        "u64": ("U64", [], struct.pack("<Q", 2**64 - 1)),
    }


def test_training_checkpoint_needs_key(tmp_path):
    path = CORPUS / "valid" / "training.zip.pt"
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    # Not refused: the message names the keys that lead to the tensors.
    assert result.returncode == 1 and "needs --key" in result.stderr, result.stderr
    assert "--key state_dict" in result.stderr, result.stderr
    assert not out.exists()
    result = run("convert", path, out, "--key", "nope")
    assert result.returncode == 1 and "no such key" in result.stderr
    assert not out.exists()


def test_key_path_follows_each_level(tmp_path):
    path = CORPUS / "valid" / "nested.zip.pt"
    out = tmp_path / "out.safetensors"
    # One level is not enough: root["module"] holds dicts, not tensors.
    result = run("convert", path, out, "--key", "module")
    assert result.returncode == 1 and "NotAStateDict" in result.stderr
    # The second key names a value that is not a dict.
    result = run("convert", path, out, "--key", "step", "--key", "model")
    assert result.returncode == 1 and "not a dict" in result.stderr
    result = run("convert", path, out, "--key", "module", "--key", "ema")
    assert result.returncode == 1 and "NotAStateDict" in result.stderr
    assert not out.exists()
    result = run("convert", path, out, "--key=module", "--key=model")
    assert result.returncode == 0, result.stderr
    assert_same(read_safetensors(out)[1], expected_tensors(path, ["module", "model"]))


def test_output_bound(tmp_path):
    """Overlapping views cannot make a small file demand unbounded output; the bound moves."""
    refused = CORPUS / "refuse" / "OutputTooLarge__expand_stride0.pt"
    out = tmp_path / "out.safetensors"
    result = run("convert", refused, out)
    assert result.returncode == 1 and "OutputTooLarge" in result.stderr
    assert not out.exists()
    scan = run("scan", "--json", refused)
    assert scan.returncode == 1
    assert json.loads(scan.stdout)["error"]["code"] == "OutputTooLarge"
    # The user can lift the bound for a file they trust, and then get torch.load's tensors.
    result = run("convert", refused, out, "--max-output-ratio", "0")
    assert result.returncode == 0, result.stderr
    assert_same(read_safetensors(out)[1], expected_tensors(refused))
    # Legitimate overlap (tied weights, an expanded buffer) is within the default bound.
    for name in ("tied.zip.pt", "views.zip.pt"):
        assert run("convert", CORPUS / "valid" / name, out).returncode == 0
    # The ratio is what decides: 40 overlapping windows of one 64 KiB storage ask for
    # 2.6 MB from a 68.5 KB file: refused at the default 4x and at 20x (20 x 68.5 KB plus
    # the 1 MiB allowance is 2.4 MB), converted at 30x (3.1 MB).
    windows = CORPUS / "refuse" / "OutputTooLarge__overlapping_windows.pt"
    result = run("convert", windows, out, "--max-output-ratio=20")
    assert result.returncode == 1 and "OutputTooLarge" in result.stderr
    result = run("convert", windows, out, "--max-output-ratio=30")
    assert result.returncode == 0, result.stderr
    assert_same(read_safetensors(out)[1], expected_tensors(windows))
    for bad in ("-1", "x", "", "99999999999999999999"):
        assert run("convert", refused, out, "--max-output-ratio", bad).returncode == 2
    # Neither option means anything for a folder: refused rather than ignored.
    folder = CORPUS / "valid" / "sharded"
    for option in (["--max-output-ratio", "8"], ["--key", "model"]):
        result = run("convert", folder, tmp_path / "folder_out", *option)
        assert result.returncode == 2 and "folder" in result.stderr
        assert not (tmp_path / "folder_out").exists()


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_tied_weights(fmt, tmp_path):
    path = CORPUS / "valid" / f"tied.{fmt}.pt"
    out = tmp_path / "kept.safetensors"
    assert run("convert", path, out).returncode == 0
    _, converted = read_safetensors(out)
    assert {"embed.weight", "lm_head.weight", "other"} == set(converted)
    assert converted["embed.weight"][2] == converted["lm_head.weight"][2]
    out = tmp_path / "dropped.safetensors"
    result = run("convert", path, out, "--drop-aliases")
    assert result.returncode == 0
    assert "dropped alias 'lm_head.weight' (same tensor as 'embed.weight')" in result.stdout
    assert set(read_safetensors(out)[1]) == {"embed.weight", "other"}


def test_sharded_folder(tmp_path):
    source = CORPUS / "valid" / "sharded"
    out = tmp_path / "out"
    result = run("convert", source, out)
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                     "model.safetensors.index.json"]
    index = json.loads((out / "model.safetensors.index.json").read_text())
    expected = {}
    for shard in sorted(source.glob("*.bin")):
        expected.update(torch.load(shard))
    assert index["metadata"]["total_size"] == sum(
        t.numel() * t.element_size() for t in expected.values())
    converted = {}
    for shard in sorted(out.glob("*.safetensors")):
        _, tensors = read_safetensors(shard)
        for name in tensors:
            assert index["weight_map"][name] == shard.name
        converted.update(tensors)
    assert_same(converted, expected)
    check = run("check", out)
    assert check.returncode == 0, check.stdout + check.stderr


def refusal_files():
    return sorted((CORPUS / "refuse").glob("*.pt"))


@pytest.mark.parametrize("path", refusal_files(), ids=lambda p: p.name)
def test_refused_with_its_own_error(path, tmp_path):
    code = path.name.split("__")[0]
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert code + " at byte" in result.stderr, result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
    scan = run("scan", "--json", path)
    report = json.loads(scan.stdout)
    # The scan's own reason; the envelope's verdict is refused (exit 1), or valid for a
    # pickle that runs nothing but holds no state dict (exit 0: safe to load; it does not
    # convert, which --require-convertible turns into exit 1).
    assert report["scan_error"]["code"] == code and report["convertible"] is False
    assert scan.returncode == {"refused": 1, "valid": 0}[report["verdict"]]
    assert run("scan", "--require-convertible", path).returncode == 1


def test_refusals_also_refused_by_nothing_else():
    # Every refusal fixture is something torch.load must not be trusted with; the
    # malicious ones really would run code: check one of them names os.system.
    report = json.loads(run("scan", "--json",
                            CORPUS / "refuse" / "PickleGlobalRefused__zip_os_system.pt").stdout)
    refused = [g for g in report["globals"] if not g["allowed"]]
    assert refused and refused[0]["name"] == "system"


def test_convert_existing_dtype_path_still_works(tmp_path):
    sample = CORPUS.parent / "sample.safetensors"
    out = tmp_path / "bf16.safetensors"
    result = run("convert", sample, out, "--dtype", "BF16")
    assert result.returncode == 0, result.stderr
    result = run("convert", sample, tmp_path / "x.safetensors")
    assert result.returncode == 2 and "needs --dtype" in result.stderr  # option missing
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a checkpoint at all")
    result = run("convert", junk, tmp_path / "x.safetensors")
    assert result.returncode == 1 and "NotATorchCheckpoint" in result.stderr
    assert not (tmp_path / "x.safetensors").exists()


def test_scan_folder_exit_codes(tmp_path):
    assert run("scan", CORPUS / "valid" / "sharded").returncode == 0
    # training.* need --key: safe to load (exit 0), not convertible as they are.
    assert run("scan", CORPUS / "valid").returncode == 0
    assert run("scan", "--require-convertible", CORPUS / "valid").returncode == 1
    assert run("scan", CORPUS / "refuse").returncode == 1
    assert run("scan", tmp_path / "missing.pt").returncode == 2


def test_check_dir_scans_pickle_files(tmp_path):
    (tmp_path / "model.safetensors").write_bytes((CORPUS.parent / "sample.safetensors").read_bytes())
    clean = CORPUS / "valid" / "module_state_dict.zip.pt"
    (tmp_path / "pytorch_model.bin").write_bytes(clean.read_bytes())
    result = run("check", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "clean:" in result.stdout and "nothing outside the allowlist" in result.stdout
    evil = CORPUS / "refuse" / "PickleGlobalRefused__zip_os_system.pt"
    (tmp_path / "pytorch_model.bin").write_bytes(evil.read_bytes())
    result = run("check", tmp_path)
    assert result.returncode == 1
    assert "PickleGlobalRefused" in result.stdout and "posix.system" in result.stdout


def test_check_dir_non_checkpoint_bin_stays_a_warning(tmp_path):
    (tmp_path / "model.safetensors").write_bytes((CORPUS.parent / "sample.safetensors").read_bytes())
    (tmp_path / "vocab.bin").write_bytes(b"not a pickle")
    result = run("check", tmp_path)
    assert result.returncode == 0, result.stdout
    assert "content is no pickle" in result.stdout and "warning" in result.stdout
