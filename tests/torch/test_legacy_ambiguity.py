# SPDX-License-Identifier: Apache-2.0
"""Files torch.load reads differently from what they seem to be, checked both ways: torch
really runs the payload (or fails), and stguard scan / convert / check DIR refuse them with
their own code. Accept cases: the same files with the trick undone, and every torch.save
pickle protocol (2-5) in both formats.

Run by ctest (tests/CMakeLists.txt) with STGUARD_CLI set to the built binary. Skips, saying
so, without torch (the reference).
"""
import io
import json
import os
import pathlib
import random
import struct
import subprocess
import sys
import tarfile

import pytest

torch = pytest.importorskip("torch", reason="torch (the reference loader) is not installed")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import legacy_ambiguity  # noqa: E402

CLI = os.environ["STGUARD_CLI"]


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def scan_code(path):
    result = run("scan", "--json", path)
    report = json.loads(result.stdout)
    return result.returncode, (report.get("error") or {}).get("code")


def assert_refused_everywhere(path, code, tmp_path):
    """scan, convert (no output left) and check DIR all refuse with `code`."""
    assert scan_code(path) == (1, code)
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    assert result.returncode != 0 and code in result.stderr + result.stdout
    assert not out.exists()
    folder = tmp_path / "model"
    folder.mkdir()
    sample = pathlib.Path(os.environ["STGUARD_TORCH_CORPUS"]).parent / "sample.safetensors"
    (folder / "model.safetensors").write_bytes(sample.read_bytes())
    (folder / "pytorch_model.bin").write_bytes(path.read_bytes())
    result = run("check", folder)
    assert result.returncode == 1, result.stdout
    assert code in result.stdout


def read_safetensors(path):
    """Tensor name -> raw bytes, read without stguard code."""
    data = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    return {name: data[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]]
            for name, e in header.items()}


def torch_load(path, **kwargs):
    """torch.load(path) as the reference: its result, or the exception it raised."""
    try:
        return torch.load(str(path), map_location="cpu", **kwargs)
    except BaseException as error:  # MemoryError, TypeError from a payload...
        return error


# ---- A legacy stream that is also a tar archive ----

def test_tar_shaped_legacy_runs_code_in_torch_and_is_refused(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "tar.pt"
    path.write_bytes(legacy_ambiguity.tar_shaped_legacy(marker))
    # Python's tarfile opens it and finds the hidden member.
    with tarfile.open(fileobj=io.BytesIO(path.read_bytes()), mode="r:") as tar:
        assert "storages" in tar.getnames()
    torch_load(path)  # weights_only=False, a real file at offset 0: the tar path
    assert marker.exists(), "torch.load did not take the tar path: the reproducer is stale"
    marker.unlink()
    assert_refused_everywhere(path, "TarAmbiguous", tmp_path)
    assert not marker.exists()


def test_tar_twin_with_a_wrong_checksum_is_read_alike(tmp_path):
    # The same bytes with the tar checksum off by one: an ordinary legacy stream.
    marker = tmp_path / "marker"
    path = tmp_path / "twin.pt"
    path.write_bytes(legacy_ambiguity.tar_shaped_legacy(marker, checksum_delta=1))
    with pytest.raises(tarfile.ReadError):
        tarfile.open(fileobj=io.BytesIO(path.read_bytes()), mode="r:")
    loaded = torch_load(path)
    assert isinstance(loaded, dict) and not marker.exists()
    code, error = scan_code(path)
    assert (code, error) == (0, None)


def tar_header_variants():
    """Headers whose checksum field is written in every form tarfile.nti reads, and near
    misses; each is (bytes, whether Python's tarfile opens it)."""
    rng = random.Random(22)
    cases = []
    for k in range(120):
        info = tarfile.TarInfo("m%d" % k)
        info.size = 0
        block = bytearray(info.tobuf(tarfile.USTAR_FORMAT))
        if k % 3 == 0:  # a byte >= 0x80 in the name: unsigned and signed sums differ
            block[60] = rng.randrange(0x80, 0x100)
        unsigned = 256 + sum(block[:148]) + sum(block[156:])
        signed = 256 + sum(b - 256 if b >= 128 else b for b in block[:148] + block[156:])
        value = rng.choice([unsigned, signed]) + rng.choice([0, 0, 1, -1, 8])
        form = rng.randrange(7)
        if form == 0:
            field = b"%06o\x00 " % value
        elif form == 1:
            field = b" %o " % value
        elif form == 2:
            field = b"0o%o\x00" % value
        elif form == 3:
            text = b"%o" % value
            field = text[:1] + b"_" + text[1:] + b"\x00"
        elif form == 4:
            field = b"\x80" + value.to_bytes(7, "big", signed=False) if value >= 0 else bytes(8)
        elif form == 5:
            field = b"+%o\x00" % value
        else:
            field = b"%o9\x00" % value  # not octal
        block[148:156] = field[:8].ljust(8, b"\x00")
        data = bytes(block) + bytes(1024)
        try:
            tarfile.open(fileobj=io.BytesIO(data), mode="r:").close()
            opens = True
        except tarfile.ReadError:
            opens = False
        cases.append((data, opens))
    return cases


def test_tar_probe_agrees_with_python_tarfile(tmp_path):
    cases = tar_header_variants()
    assert {opens for _, opens in cases} == {True, False}
    for n, (data, opens) in enumerate(cases):
        path = tmp_path / ("h%d.pt" % n)
        path.write_bytes(data)
        code = scan_code(path)[1]
        assert (code == "TarAmbiguous") == opens, (n, data[148:156], opens, code)


# ---- A FRAME that reaches past its pickle's STOP ----

def test_long_frame_runs_code_in_torch_and_is_refused(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "frame.pt"
    path.write_bytes(legacy_ambiguity.long_frame_legacy(marker))
    torch_load(path)
    assert marker.exists(), "torch.load read the honest pickle: the reproducer is stale"
    marker.unlink()
    assert_refused_everywhere(path, "PickleFrameAmbiguous", tmp_path)


# ---- Files torch refuses ----

def test_huge_memo_key_fails_in_torch_and_is_refused(tmp_path):
    path = tmp_path / "memo.pt"
    path.write_bytes(legacy_ambiguity.huge_memo_key_legacy())
    assert isinstance(torch_load(path), MemoryError)
    assert scan_code(path) == (1, "PickleMemoKey")
    result = run("convert", path, tmp_path / "out.safetensors")
    assert result.returncode != 0 and "PickleMemoKey" in result.stderr + result.stdout


# ---- Accept: what torch.save writes, at every pickle protocol ----

@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_pickle_protocol_is_read_like_torch(protocol, legacy, tmp_path):
    torch.manual_seed(protocol)
    # Large enough that protocol 4+ pickles split into several frames (64 KiB each).
    state = {"layer%03d.weight" % k: torch.randn(3, 2) for k in range(1500)}
    state["big"] = torch.randn(200000)
    path = tmp_path / "p.pt"
    torch.save(state, path, pickle_protocol=protocol, _use_new_zipfile_serialization=not legacy)
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    assert result.returncode == 0, result.stderr
    converted = read_safetensors(out)
    loaded = torch.load(path, map_location="cpu")
    assert set(converted) == set(loaded)
    for name, tensor in loaded.items():
        assert converted[name] == tensor.contiguous().numpy().tobytes(), name
    assert_one_format(path, "legacy" if legacy else "zip")


def assert_one_format(path, torch_format):
    """check (the sniffer) and scan (the torch reader) name the same container."""
    check = json.loads(run("check", "--json", path).stdout)
    scan = json.loads(run("scan", "--json", path).stdout)
    assert check["format"] == "pytorch-" + torch_format, check
    assert scan["torch_format"] == torch_format, scan


@pytest.mark.parametrize("protocol", [0, 1])
def test_legacy_stream_of_a_text_protocol_is_legacy_to_check_and_scan(protocol, tmp_path):
    # torch.save(pickle_protocol=0 or 1) writes the magic number as a text LONG, which
    # torch.load reads as the legacy stream's magic (at protocol 1 it loads the whole
    # stream; torch 1.13 fails later in a protocol 0 one). stguard's reader reads
    # protocols 2-5 only, so it refuses the stream, but as the legacy stream it is,
    # everywhere.
    path = tmp_path / "p.pt"
    torch.save({"w": torch.arange(4.0)}, path, pickle_protocol=protocol,
               _use_new_zipfile_serialization=False)
    assert isinstance(torch_load(path), BaseException) == (protocol == 0)
    assert_one_format(path, "legacy")
    assert run("check", path).returncode == 1


def renumber_memo_from_one(data, pickles):
    """The first `pickles` pickles of `data` with every BINPUT/BINGET key one higher, as
    Python 2's cPickle numbered its memo (torch's legacy files saved under Python 2)."""
    import pickletools
    out = bytearray(data)
    stream = io.BytesIO(data)
    for _ in range(pickles):
        for opcode, arg, pos in pickletools.genops(stream):
            if opcode.name in ("BINPUT", "BINGET"):
                assert arg < 255
                out[pos + 1] = arg + 1
    return bytes(out)


def test_memo_numbered_from_one_as_python2_wrote_it_is_read_like_torch(tmp_path):
    # Python 2's cPickle numbered memo keys 1, 2, 3...: torch still loads such legacy files,
    # and stguard reads them alike. Keys must still be dense (the next one each time).
    state = {"a": torch.arange(6, dtype=torch.float32), "b": torch.ones(2, 3)}
    plain = tmp_path / "plain.pt"
    torch.save(state, plain, _use_new_zipfile_serialization=False)
    # magic number, protocol version, system info, the state dict, the storage keys
    path = tmp_path / "py2.pt"
    path.write_bytes(renumber_memo_from_one(plain.read_bytes(), 5))
    loaded = torch_load(path)
    assert not isinstance(loaded, BaseException), loaded
    out = tmp_path / "out.safetensors"
    result = run("convert", path, out)
    assert result.returncode == 0, result.stderr
    converted = read_safetensors(out)
    assert set(converted) == set(state)
    for name, tensor in loaded.items():
        assert converted[name] == tensor.numpy().tobytes(), name


# ---- A tensor that cannot require gradients, saved as requiring them ----

@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_requires_grad_on_an_integer_tensor_fails_in_torch_and_is_refused(legacy, tmp_path):
    for dtype, torch_reads in ((torch.int64, False), (torch.float32, True)):
        path = tmp_path / ("grad_%s.pt" % str(dtype)[6:])
        torch.save({"w": torch.arange(4, dtype=dtype)}, path,
                   _use_new_zipfile_serialization=not legacy)
        data = path.read_bytes()
        # _rebuild_tensor_v2's requires_grad: NEWFALSE just before the empty OrderedDict of
        # backward hooks (one occurrence in this pickle); as data.pkl stores it, the ZIP's
        # CRC-32 is recomputed by rewriting the archive.
        path.write_bytes(set_requires_grad(data, legacy))
        loaded = torch_load(path)
        assert isinstance(loaded, dict) == torch_reads, loaded
        expected = (0, None) if torch_reads else (1, "PickleBadArguments")
        assert scan_code(path) == expected


def set_requires_grad(data, legacy):
    flip = b"\x89ccollections\nOrderedDict\n"
    if legacy:
        assert data.count(flip) == 1
        return data.replace(flip, b"\x88" + flip[1:])
    import zipfile
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            content = source.read(info)
            if info.filename.endswith("data.pkl"):
                assert content.count(flip) == 1
                content = content.replace(flip, b"\x88" + flip[1:])
            target.writestr(info, content)
    return out.getvalue()
