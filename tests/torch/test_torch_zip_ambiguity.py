# SPDX-License-Identifier: Apache-2.0
"""ZIP archives that torch.load reads differently from a plain ZIP reader, proved both ways.

Each reproducer is built from torch's own output (torch.save / torch.jit.save) by editing
the ZIP by hand, then checked twice: torch really reads the other data or runs the other
path (the attack is live), and stguard refuses it (scan exits 1, convert writes nothing,
check DIR calls the folder invalid). Payloads only create a marker file.

  - a second end of central directory record inside the real one's comment: torch's
    reader (miniz) takes the last one it finds scanning back, and a hidden central
    directory with it;
  - record names that differ only in case: torch's lookup ignores case;
  - records torch.save never writes: constants.pkl sends torch.load to torch.jit.load;
    byteorder other than "little";
  - what torch refuses: no version record, version 99, a ZIP64-escaped offset miniz does
    not follow (and the ZIP64 shapes it does follow, which stguard accepts too).

Run by ctest (tests/CMakeLists.txt) with STGUARD_CLI set; exits 77 (a skip, shown by
ctest) when Debian's torch is not installed.

  test_torch_zip_ambiguity.py --write-fixtures corpus/torch/refuse

writes the reproducers as refusal fixtures (<Code>__<name>.pt), which test_torch_convert.py
checks like every refusal and the fuzz targets take as seeds.
"""
import os
import pathlib
import struct
import subprocess
import sys
import warnings
import zipfile
import zlib

try:
    import torch
except ImportError:
    torch = None

import pytest

CLI = os.environ.get("STGUARD_CLI", "")
SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "corpus" / "sample.safetensors"


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


# --- a small ZIP writer: stored records, optionally ZIP64 end records -----------------
def local_record(name, data, extra=b""):
    crc = zlib.crc32(data)
    header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0x0800, 0, 0, 0, crc, len(data),
                         len(data), len(name), len(extra))
    return header + name + extra + data


def central_entry(name, data, offset, offset_field=None, size_field=None, extra=b""):
    crc = zlib.crc32(data)
    size = len(data) if size_field is None else size_field
    off = offset if offset_field is None else offset_field
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0x0800, 0, 0, 0, crc, size,
                       size, len(name), len(extra), 0, 0, 0, 0, off) + name + extra


def end_records(count, cd_offset, cd_len, zip64, comment=b""):
    out = b""
    if zip64:
        record = cd_offset + cd_len
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_len,
                           cd_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, record, 1)
    return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_len, cd_offset,
                             len(comment)) + comment


def build_zip(records, folder=b"archive", zip64=True, central=None):
    """records: [(path bytes, data bytes)]. central(i, name, data, offset) may return the
    central directory entry for record i (to escape fields); None keeps the plain one."""
    body, entries = b"", b""
    for i, (path, data) in enumerate(records):
        name = folder + b"/" + path
        offset = len(body)
        body += local_record(name, data)
        entry = central(i, name, data, offset) if central else None
        entries += entry if entry is not None else central_entry(name, data, offset)
    return body + entries + end_records(len(records), len(body), len(entries), zip64)


def torch_records(path):
    """The records of a torch-written archive, without their folder, in file order."""
    with zipfile.ZipFile(path) as z:
        return [(n.split("/", 1)[1].encode(), z.read(n)) for n in z.namelist()]


# --- payloads ---------------------------------------------------------------------------
def opening_pickle(marker):
    """A pickle that opens `marker` for writing (creating it) when loaded: builtins.open."""
    return (b"\x80\x02cbuiltins\nopen\nq\x00X" + struct.pack("<I", len(str(marker))) +
            str(marker).encode() + b"X\x01\x00\x00\x00w\x86R.")


@pytest.fixture
def saved(tmp_path):
    """A torch.save state dict and its records."""
    path = tmp_path / "clean.pt"
    torch.save({"weight": torch.arange(6, dtype=torch.float32)}, path)
    return path, torch_records(path)


def torch_load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(path, map_location="cpu", **kwargs)


def assert_refused(tmp_path, path, code, detail=""):
    """scan exits 1 naming the code, convert writes nothing, check DIR is invalid (a
    pickle-bearing file that cannot be proven safe fails the folder, whatever torch does)."""
    scan = run("scan", path)
    assert scan.returncode == 1 and code in scan.stdout + scan.stderr, scan.stdout + scan.stderr
    assert detail in scan.stdout + scan.stderr, scan.stdout + scan.stderr
    out = tmp_path / "out.safetensors"
    convert = run("convert", path, out)
    assert convert.returncode == 1 and not out.exists(), convert.stderr
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    (folder / "model.safetensors").write_bytes(SAMPLE.read_bytes())
    (folder / "pytorch_model.bin").write_bytes(pathlib.Path(path).read_bytes())
    check = run("check", folder)
    assert check.returncode == 1, check.stdout + check.stderr
    assert code in check.stdout, check.stdout


def assert_accepted(path):
    scan = run("scan", path)
    assert scan.returncode == 0, scan.stdout + scan.stderr


def test_rebuilt_archive_is_read_alike(tmp_path, saved):
    # The writer above makes archives both torch and stguard accept: each case below
    # differs from this one by the shape it tests.
    _, records = saved
    path = tmp_path / "rebuilt.pt"
    path.write_bytes(build_zip(records))
    assert torch.equal(torch_load(path)["weight"], torch.arange(6, dtype=torch.float32))
    assert_accepted(path)
    path.write_bytes(build_zip(records, zip64=False))
    assert torch.equal(torch_load(path)["weight"], torch.arange(6, dtype=torch.float32))
    assert_accepted(path)


def second_end_archive(clean, folder, marker):
    """torch's archive `clean` with a hidden archive in its end record's comment: data.pkl
    with the payload and version, their central directory, and an end record pointing there,
    followed by two bytes, so that its own comment length (0) does not reach the end of the
    file: a reader that insists on that takes the real record; miniz takes the last
    signature it meets scanning back."""
    assert clean[-22:-18] == b"PK\x05\x06" and clean[-2:] == b"\0\0"
    comment_start = len(clean)
    hidden = [(b"data.pkl", opening_pickle(marker)), (b"version", b"3\n")]
    body, entries = b"", b""
    for path, data in hidden:
        name = folder + b"/" + path
        entries += central_entry(name, data, comment_start + len(body))
        body += local_record(name, data)
    cd_offset = comment_start + len(body)
    fake_end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(hidden), len(hidden),
                           len(entries), cd_offset, 0)
    comment = body + entries + fake_end + b"\0\0"
    return clean[:-2] + struct.pack("<H", len(comment)) + comment


def test_second_end_record_in_comment(tmp_path, saved):
    clean_path, _ = saved
    marker = tmp_path / "marker"
    folder = zipfile.ZipFile(clean_path).namelist()[0].split("/")[0].encode()
    edited = second_end_archive(clean_path.read_bytes(), folder, marker)
    path = tmp_path / "second_end.pt"
    path.write_bytes(edited)
    # torch's own reader reads the hidden archive, and torch.load runs its payload (a
    # reader that takes the end record whose comment ends the file, as stguard did before
    # this rule, reads the clean one).
    reader = torch._C.PyTorchFileReader(str(path))
    assert reader.get_record("data.pkl") == opening_pickle(marker)
    assert not marker.exists()
    torch_load(path)
    assert marker.exists()
    assert_refused(tmp_path, path, "ZipLayout", "comment")


def test_names_differing_in_case(tmp_path, saved):
    _, records = saved
    marker = tmp_path / "marker"
    evil = (b"DATA.PKL", opening_pickle(marker))
    # Which twin torch's lookup lands on depends on the order: one of them is the payload.
    chosen = []
    for at in range(len(records) + 1):
        order = records[:at] + [evil] + records[at:]
        path = tmp_path / "twins.pt"
        path.write_bytes(build_zip(order))
        chosen.append(torch._C.PyTorchFileReader(str(path)).get_record("data.pkl"))
        assert_refused(tmp_path, path, "ZipDuplicateName", "differ only in case")
        if chosen[-1] == opening_pickle(marker):
            torch_load(path)
            assert marker.exists()
    assert opening_pickle(marker) in chosen


def test_constants_record_sends_torch_load_to_jit(tmp_path, saved, monkeypatch):
    # A clean state dict plus a constants.pkl: torch.load hands the file to torch.jit.load,
    # with weights_only=True too.
    _, records = saved
    path = tmp_path / "with_constants.pt"
    path.write_bytes(build_zip(records + [(b"constants.pkl", b"\x80\x02).")]))
    calls = []
    monkeypatch.setattr(torch.jit, "load", lambda *a, **k: calls.append(a) or "jit")
    assert torch_load(path) == "jit"
    assert torch_load(path, weights_only=True) == "jit"
    assert len(calls) == 2
    assert_refused(tmp_path, path, "ZipUnexpectedRecord", "constants.pkl")


class Doubler(torch.nn.Module if torch else object):
    def forward(self, x):
        return x * 2


def test_torchscript_archive_runs_its_code(tmp_path):
    # A real torch.jit.save archive, stored (torch compresses code/): torch.load compiles
    # and runs its TorchScript; stguard names the record that sends it there.
    scripted = tmp_path / "scripted.pt"
    torch.jit.save(torch.jit.script(Doubler()), scripted)
    records = torch_records(scripted)
    path = tmp_path / "stored_script.pt"
    path.write_bytes(build_zip(records))
    module = torch_load(path)
    assert isinstance(module, torch.jit.ScriptModule)
    assert torch.equal(module(torch.ones(2)), torch.full((2,), 2.0))
    assert_refused(tmp_path, path, "ZipUnexpectedRecord")


def test_byteorder_record(tmp_path, saved):
    _, records = saved
    path = tmp_path / "little.pt"
    path.write_bytes(build_zip(records + [(b"byteorder", b"little")]))
    assert torch.equal(torch_load(path)["weight"], torch.arange(6, dtype=torch.float32))
    assert_accepted(path)
    # torch 2.1+ byte-swaps every storage of a "big" archive; stguard copies bytes as they
    # are, so it refuses (torch 1.13 ignores the record, which is a differential too).
    path = tmp_path / "big.pt"
    path.write_bytes(build_zip(records + [(b"byteorder", b"big")]))
    assert_refused(tmp_path, path, "StorageMismatch", "byteorder")


def with_version(records, version):
    return [r for r in records if r[0] != b"version"] + ([(b"version", version)] if version else [])


def test_what_torch_refuses(tmp_path, saved):
    _, records = saved
    path = tmp_path / "edited.pt"
    for version, code in ((None, "ZipMissingRecord"), (b"99\n", "ZipUnsupportedVersion"),
                          (b"0\n", "ZipUnsupportedVersion")):
        path.write_bytes(build_zip(with_version(records, version)))
        with pytest.raises(RuntimeError):
            torch_load(path)
        assert_refused(tmp_path, path, code, "version")
    # The highest version torch reads, and .data/version alone, are read alike.
    path.write_bytes(build_zip(with_version(records, b"10\n")))
    torch_load(path)
    assert_accepted(path)
    path.write_bytes(build_zip(with_version(records, None) + [(b".data/version", b"3\n")]))
    torch_load(path)
    assert_accepted(path)


def zip64_extra(*values):
    return struct.pack("<HH", 1, 8 * len(values)) + b"".join(struct.pack("<Q", v) for v in values)


def test_zip64_escaped_offsets(tmp_path, saved):
    _, records = saved
    last = len(records) - 1
    path = tmp_path / "zip64.pt"

    # The offset alone escaped: miniz checks 0xFFFFFFFF itself against the file size
    # before it reads the ZIP64 field, and refuses the archive.
    def offset_only(i, name, data, offset):
        if i != last:
            return None
        return central_entry(name, data, offset, offset_field=0xFFFFFFFF,
                             extra=zip64_extra(offset))
    path.write_bytes(build_zip(records, central=offset_only))
    with pytest.raises(RuntimeError):
        torch_load(path)
    assert_refused(tmp_path, path, "ZipFormat", "0xFFFFFFFF")

    # Sizes and offset escaped: miniz follows the ZIP64 field, and so does stguard.
    def all_escaped(i, name, data, offset):
        if i != last:
            return None
        return central_entry(name, data, offset, offset_field=0xFFFFFFFF, size_field=0xFFFFFFFF,
                             extra=zip64_extra(len(data), len(data), offset))
    path.write_bytes(build_zip(records, central=all_escaped))
    assert torch.equal(torch_load(path)["weight"], torch.arange(6, dtype=torch.float32))
    assert_accepted(path)


def write_fixtures(folder):
    """Writes the reproducers as corpus/torch/refuse/<Code>__<name>.pt (checked by
    test_torch_convert.py like every refusal, and fuzz seeds). Their payload opens
    ./stguard_marker for writing."""
    import tempfile
    marker = "stguard_marker"
    with tempfile.TemporaryDirectory() as tmp:
        clean_path = pathlib.Path(tmp) / "archive.pt"
        torch.save({"weight": torch.arange(6, dtype=torch.float32)}, clean_path)
        records = torch_records(clean_path)
        scripted = pathlib.Path(tmp) / "scripted.pt"
        torch.jit.save(torch.jit.script(Doubler()), scripted)
        script_records = torch_records(scripted)
        clean = clean_path.read_bytes()
    last = len(records) - 1
    out = {
        "ZipLayout__end_record_in_comment": second_end_archive(clean, b"archive", marker),
        "ZipDuplicateName__case_twin_data_pkl":
            build_zip(records[:1] + [(b"DATA.PKL", opening_pickle(marker))] + records[1:]),
        "ZipUnexpectedRecord__constants_pkl":
            build_zip(records + [(b"constants.pkl", b"\x80\x02).")]),
        "ZipUnexpectedRecord__torchscript": build_zip(script_records),
        "ZipMissingRecord__no_version": build_zip(with_version(records, None)),
        "ZipUnsupportedVersion__version_99": build_zip(with_version(records, b"99\n")),
        "StorageMismatch__byteorder_big": build_zip(records + [(b"byteorder", b"big")]),
        "ZipFormat__zip64_offset_beside_32bit_size": build_zip(
            records, central=lambda i, name, data, offset: None if i != last else
            central_entry(name, data, offset, offset_field=0xFFFFFFFF,
                          extra=zip64_extra(offset))),
    }
    for name, data in out.items():
        (pathlib.Path(folder) / (name + ".pt")).write_bytes(data)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-fixtures":
        write_fixtures(sys.argv[2])
        sys.exit(0)
    if torch is None:
        print("SKIP: torch is not installed (Debian's python3-torch); the ZIP ambiguity "
              "reproducers need it as their reference")
        sys.exit(77)
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", __file__]))
