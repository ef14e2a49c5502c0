# SPDX-License-Identifier: Apache-2.0
"""The front door from Python: check, scan, lint and convert give the command's verdict in
the envelope's words, for every format; load_file on a PyTorch file says what it is; errors
show a byte offset only when it points into a file."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import numpy
import pytest

import stguard
import stguard.numpy as snp
from conftest import CORPUS

TORCH = CORPUS / "torch"
CLEAN = TORCH / "valid" / "dtypes.zip.pt"
CLEAN_LEGACY = TORCH / "valid" / "dtypes.legacy.pt"
TRAINING = TORCH / "valid" / "training.zip.pt"
OS_SYSTEM = TORCH / "refuse" / "PickleGlobalRefused__zip_os_system.pt"
VALID = CORPUS / "sample.safetensors"
INVALID = CORPUS / "invalid" / "DuplicateKey__tensor_twice.safetensors"
ENVELOPE = ("schema_version", "file", "format", "verdict", "code", "message", "offset", "tensor")
EXIT_STATUS = {"valid": 0, "invalid": 1, "refused": 1, "error": 2}


def model_folder(tmp_path, malicious: bool):
    """A folder with a valid model.safetensors and, if `malicious`, a pytorch_model.bin
    that names os.system."""
    folder = tmp_path / ("mixed" if malicious else "clean")
    folder.mkdir()
    shutil.copy(VALID, folder / "model.safetensors")
    if malicious:
        shutil.copy(OS_SYSTEM, folder / "pytorch_model.bin")
    return folder


def run_cli(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


# ------------------------------------------------------------------------------ check


def test_folder_with_malicious_pickle_is_refused(tmp_path):
    # Reject: a valid model beside a malicious pytorch_model.bin.
    result = stguard.check(model_folder(tmp_path, malicious=True))
    assert not result.ok and not result
    assert result.verdict == "refused"
    assert result.code == "PickleGlobalRefused"
    assert result.member == "pytorch_model.bin"
    assert [r.file for r in result.results].count("pytorch_model.bin") == 1
    # Accept: the same model alone.
    clean = stguard.check(model_folder(tmp_path, malicious=False))
    assert clean.ok and clean.verdict == "valid" and clean.tensors == 7


@pytest.mark.parametrize("name", ["valid", "invalid", "torch", "torch_refused", "missing",
                                  "mixed", "clean_folder"])
def test_check_verdict_matches_the_command(cli, tmp_path, name):
    path = {"valid": VALID, "invalid": INVALID, "torch": CLEAN, "torch_refused": OS_SYSTEM,
            "missing": tmp_path / "absent.safetensors",
            "mixed": model_folder(tmp_path, malicious=True),
            "clean_folder": model_folder(tmp_path, malicious=False)}[name]
    result = stguard.check(path)
    command = run_cli(cli, "check", "--json", str(path))
    assert command.returncode == EXIT_STATUS[result.verdict], command.stdout
    printed = json.loads(command.stdout.splitlines()[0])
    if "verdict" in printed:  # the command prints the envelope: every field is the same
        for key in ENVELOPE:
            assert getattr(result, key) == printed.get(key), key


def test_check_envelope_fields():
    invalid = stguard.check(INVALID)
    assert (invalid.schema_version, invalid.format, invalid.verdict) == (2, "safetensors", "invalid")
    assert invalid.code == "DuplicateKey" and invalid.offset > 0
    assert invalid.error.code == "DuplicateKey"
    missing = stguard.check("/nonexistent/model.safetensors")
    assert missing.verdict == "error" and missing.code == "IoError"
    assert missing.offset is None  # no byte of any file is at fault
    refused = stguard.check(OS_SYSTEM)
    assert (refused.format, refused.verdict) == ("pytorch-zip", "refused")
    # The verdict's sentence is the library's, one per verdict.
    assert refused.sentence.startswith("Refused: ")
    assert len({invalid.sentence, missing.sentence, refused.sentence,
                stguard.check(VALID).sentence}) == 4


# ------------------------------------------------------------------------------- scan


def first_scan_line(cli, path):
    return run_cli(cli, "scan", str(path)).stdout.splitlines()[0]


@pytest.mark.parametrize("path", [CLEAN, CLEAN_LEGACY, TRAINING, OS_SYSTEM,
                                  TORCH / "refuse" / "PickleCorrupt__no_stop.pt",
                                  TORCH / "refuse" / "RawPickle__raw_clean_pickle.pt"],
                         ids=lambda p: p.name)
def test_scan_says_what_the_command_says(cli, path):
    result = stguard.scan(path)
    assert first_scan_line(cli, path) == f"{path}: {result.format}: {result.description}"


def test_scan_verdicts():
    clean = stguard.scan(CLEAN)
    assert (clean.verdict, clean.scan_verdict, clean.format) == ("valid", "clean", "pytorch-zip")
    assert clean.code is None and clean.error is None
    assert len(clean.tensors) == 11 and all(t.name for t in clean.tensors)
    assert all(g.allowed for g in clean.globals)
    evil = stguard.scan(OS_SYSTEM)
    assert (evil.verdict, evil.scan_verdict, evil.code) == ("refused", "names-code",
                                                            "PickleGlobalRefused")
    assert evil.offset > 0 and any(not g.allowed for g in evil.globals)
    keyed = stguard.scan(TRAINING)
    assert (keyed.verdict, keyed.scan_verdict, keyed.key_paths) == ("valid", "needs-key",
                                                                    [["state_dict"]])
    assert stguard.scan(TRAINING, key="state_dict").scan_verdict == "clean"
    missing = stguard.scan("/nonexistent/model.bin")
    assert (missing.verdict, missing.code) == ("error", "IoError")


def test_scan_folder(tmp_path):
    mixed = stguard.scan(model_folder(tmp_path, malicious=True))
    assert (mixed.verdict, mixed.member, mixed.scan_verdict) == ("refused", "pytorch_model.bin",
                                                                  "names-code")
    assert [r.file for r in mixed.results] == ["pytorch_model.bin"]
    assert stguard.scan(model_folder(tmp_path, malicious=False)).verdict == "valid"


# ------------------------------------------------------------------------------- lint


def test_lint_gives_check_verdict_first(tmp_path, cli):
    # Reject: a refused pickle beside valid weights is never "ok" for lint.
    mixed = model_folder(tmp_path, malicious=True)
    result = stguard.lint(mixed)
    assert not result.ok and result.verdict == "refused" and result.code == "PickleGlobalRefused"
    assert result.findings == []  # lint does not run on what check refuses
    # Accept: the same weights alone are linted (this sample breaks the int4 group rule).
    clean = stguard.lint(model_folder(tmp_path, malicious=False))
    assert any(f.rule == "config-missing" for f in clean.findings)
    assert (clean.verdict, clean.code, clean.errors) == ("invalid", "LintError", 1)
    assert clean.tensor == "model.layers.0.mlp.up_proj"
    missing = stguard.lint(tmp_path / "absent")
    assert missing.verdict == "error" and not missing.ok


@pytest.mark.parametrize("malicious", [True, False])
def test_lint_verdict_matches_the_command(cli, tmp_path, malicious):
    folder = model_folder(tmp_path, malicious)
    result = stguard.lint(folder)
    command = run_cli(cli, "lint", "--json", str(folder))
    assert command.returncode == EXIT_STATUS[result.verdict]
    printed = json.loads(command.stdout.splitlines()[0])
    for key in ENVELOPE:
        assert getattr(result, key) == printed.get(key), key
    # The findings and counts are the command's; lint did not run on what check refused.
    assert result.linted == ("findings" in printed) == (not malicious)
    if result.linted:
        assert [dataclasses.asdict(f) for f in result.findings] == printed["findings"]
        assert (result.family, result.errors, result.warnings, result.tensors, result.shards) == \
            tuple(printed[key] for key in ("family", "errors", "warnings", "tensors", "shards"))


def test_lint_of_a_format_it_does_not_read_is_a_usage_error(tmp_path):
    # Reject: a valid GGUF file is not linted (as `stguard lint` says), nor is it a finding.
    gguf = CORPUS.parent / "conformance" / "gguf" / "y_alignment_16.gguf"
    result = stguard.lint(gguf)
    assert (result.verdict, result.code, result.linted) == ("error", "InvalidArgument", False)
    assert result.findings == []
    # Accept: a safetensors file is.
    single = stguard.lint(VALID)
    assert single.linted and single.format == "safetensors"


# ---------------------------------------------------------------------------- convert


def test_convert_torch_matches_scan_and_torch(tmp_path):
    out = tmp_path / "model.safetensors"
    result = stguard.convert(CLEAN, out)
    assert (result.verdict, result.format, result.output) == ("valid", "pytorch-zip", str(out))
    loaded = snp.load_file(out)
    assert sorted(loaded) == sorted(t.name for t in stguard.scan(CLEAN).tensors)
    assert result.tensors == len(loaded)
    torch = pytest.importorskip("torch", reason="torch is the reference for the values")
    reference = torch.load(CLEAN, map_location="cpu")
    for name, tensor in reference.items():
        if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16: compare the bits
            bits = tensor.view(torch.int16).numpy().view(numpy.uint16)
            assert numpy.array_equal(loaded[name], bits), name
        else:
            assert numpy.array_equal(loaded[name], tensor.numpy()), name


def test_convert_with_dtype_applies_to_torch_input(tmp_path):
    out = tmp_path / "half.safetensors"
    result = stguard.convert(CLEAN_LEGACY, out, "F16")
    assert result.converted > 0
    with stguard.safe_open(out, framework="np") as handle:
        floats = [handle.get_tensor(k).dtype for k in handle.keys()
                  if handle.get_tensor(k).dtype.kind == "f"]
    assert floats and all(dtype == numpy.float16 for dtype in floats)
    assert [p.name for p in tmp_path.iterdir()] == ["half.safetensors"]  # no temporary left


def test_convert_refusals_write_nothing(tmp_path):
    out = tmp_path / "out.safetensors"
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(OS_SYSTEM, out)
    assert raised.value.code == "PickleGlobalRefused" and not out.exists()
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(TRAINING, out)
    assert raised.value.code == "NotAStateDict" and not out.exists()
    assert stguard.convert(TRAINING, out, key="state_dict").tensors > 0
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(OS_SYSTEM, tmp_path / "x.safetensors", "BF16")
    assert raised.value.code == "PickleGlobalRefused"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.safetensors"]


def test_convert_dtype_streams_without_an_intermediate_file(tmp_path, monkeypatch):
    """The library converts torch, torch-folder, npy and npz inputs to dtype as they
    stream: no second safetensors-to-dtype pass over an intermediate file."""
    import stguard._front_door as front_door
    second_passes = []
    real_convert = front_door._core.convert

    def counting_convert(*args):
        # Each stguard.convert is one library call; a second pass would be a second call.
        second_passes.append(args[0])
        return real_convert(*args)

    monkeypatch.setattr(front_door._core, "convert", counting_convert)
    result = stguard.convert(CLEAN, tmp_path / "t.safetensors", "F16")
    assert result.converted > 0
    folder = stguard.convert(TORCH / "valid" / "sharded", tmp_path / "out" / "f16", "F16")
    assert folder.written[-1] == "model.safetensors.index.json"
    numpy.save(tmp_path / "w.npy", numpy.arange(4, dtype=numpy.float32))
    stguard.convert(tmp_path / "w.npy", tmp_path / "w.safetensors", "F16")
    assert snp.load_file(tmp_path / "w.safetensors")["w"].dtype == numpy.float16
    for shard in (tmp_path / "out" / "f16").glob("*.safetensors"):
        with stguard.safe_open(shard, framework="np") as handle:
            kinds = {handle.get_tensor(k).dtype for k in handle.keys()}
        assert numpy.float32 not in kinds, (shard, kinds)
    numpy.savez(tmp_path / "a.npz", x=numpy.arange(4, dtype=numpy.float32),
                i=numpy.arange(3, dtype=numpy.int32))
    assert stguard.convert(tmp_path / "a.npz", tmp_path / "a.safetensors", "F16").tensors == 2
    loaded = snp.load_file(tmp_path / "a.safetensors")
    assert loaded["x"].dtype == numpy.float16 and loaded["i"].dtype == numpy.int32
    assert second_passes == [str(CLEAN), str(TORCH / "valid" / "sharded"),
                             str(tmp_path / "w.npy"), str(tmp_path / "a.npz")]
    # Accept: a safetensors input converts safetensors to a dtype, in one call too.
    stguard.convert(tmp_path / "a.safetensors", tmp_path / "b.safetensors", "F32")
    assert second_passes[-1] == str(tmp_path / "a.safetensors") and len(second_passes) == 5
    # A dtype that is no conversion target is refused before anything is written.
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(CLEAN, tmp_path / "bad.safetensors", "I8")
    assert raised.value.code == "InvalidArgument" and not (tmp_path / "bad.safetensors").exists()


def test_convert_options_that_do_not_apply_are_refused(tmp_path):
    out = tmp_path / "out.safetensors"
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(VALID, out)  # a safetensors input needs a dtype
    assert raised.value.code == "InvalidArgument" and "dtype" in str(raised.value)
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(VALID, out, "BF16", key="state_dict")
    assert raised.value.code == "InvalidArgument" and "key" in str(raised.value)
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(CLEAN, out, name="x")
    assert "name" in str(raised.value)
    assert not out.exists()
    assert stguard.convert(VALID, out, "BF16").tensors == 7


def test_convert_folder_creates_and_cleans_its_output(tmp_path):
    out = tmp_path / "a" / "b"
    result = stguard.convert(TORCH / "valid" / "sharded", out)
    assert result.format == "folder" and result.written[-1] == "model.safetensors.index.json"
    assert stguard.check(out).ok
    refused_in = tmp_path / "refused_in"
    refused_in.mkdir()
    shutil.copy(OS_SYSTEM, refused_in / "pytorch_model.bin")
    with pytest.raises(stguard.SafetensorError):
        stguard.convert(refused_in, tmp_path / "c" / "d")
    assert not (tmp_path / "c").exists()  # only what this call created, and it is removed


def test_convert_npy_and_the_formats_without_a_converter(tmp_path):
    array = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    numpy.save(tmp_path / "weights.npy", array)
    result = stguard.convert(tmp_path / "weights.npy", tmp_path / "w.safetensors")
    assert result.format == "npy"
    assert numpy.array_equal(snp.load_file(tmp_path / "w.safetensors")["weights"], array)
    (tmp_path / "model.gguf").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(tmp_path / "model.gguf", tmp_path / "g.safetensors")
    assert "GGUF" in str(raised.value) and not (tmp_path / "g.safetensors").exists()
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(tmp_path / "notes.txt", tmp_path / "n.safetensors")
    assert "unknown" in str(raised.value)


# ------------------------------------------------------------------ messages and load_file


@pytest.mark.parametrize("path", [CLEAN, CLEAN_LEGACY, OS_SYSTEM], ids=lambda p: p.name)
def test_load_file_on_a_pytorch_file_says_so(tmp_path, path):
    target = tmp_path / "pytorch_model.bin"
    shutil.copy(path, target)
    for load in (snp.load_file, lambda p: stguard.safe_open(p, framework="np")):
        with pytest.raises(stguard.SafetensorError) as raised:
            load(target)
        assert raised.value.code == "NotSafetensors"
        text = str(raised.value)
        assert "PyTorch checkpoint" in text and "stguard.convert" in text
        assert "HeaderTooLarge" not in text and "at byte" not in text
    # Reject case of the rule: a broken safetensors file keeps its own error.
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.load_file(INVALID)
    assert raised.value.code == "DuplicateKey"


def test_offsets_only_when_they_point_into_a_file(tmp_path):
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.save_file({"a": numpy.zeros(2), 3: numpy.zeros(2)}, tmp_path / "x.safetensors")
    assert str(raised.value).startswith("InvalidArgument: ")
    with pytest.raises(stguard.SafetensorError) as raised:  # refused by the C++ writer
        snp.save_file({"__metadata__": numpy.zeros(2, dtype=numpy.float32)},
                      tmp_path / "x.safetensors")
    assert raised.value.code == "InvalidTensorName"
    assert "at byte" not in str(raised.value)
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.load_file(tmp_path / "absent.safetensors")
    # A missing file reads as the reference's text, without an offset; the code says IoError.
    assert str(raised.value) == f"No such file or directory: {tmp_path / 'absent.safetensors'}"
    assert raised.value.code == "IoError"
    with pytest.raises(stguard.SafetensorError) as raised:  # a byte of the file: shown
        snp.load_file(INVALID)
    assert str(raised.value).startswith(f"DuplicateKey at byte {raised.value.offset}: ")


def envelope_schema():
    """The envelope's schema as tests/support/formats.py makes it (formats from formats.def)."""
    sys.path.insert(0, str(CORPUS.parent / "tests" / "support"))
    try:
        import formats
    finally:
        sys.path.pop(0)
    return formats.envelope_schema(str(CORPUS.parent))


def test_envelopes_follow_the_schema(tmp_path):
    # The envelope's schema, checked by hand (jsonschema is not installed here): the
    # required fields, the enums, and code/message/tensor exactly when not valid.
    schema = envelope_schema()
    properties = schema["properties"]
    results = [stguard.check(VALID), stguard.check(INVALID), stguard.check(OS_SYSTEM),
               stguard.check(tmp_path / "absent"), stguard.check(model_folder(tmp_path, True)),
               stguard.scan(CLEAN), stguard.scan(TRAINING), stguard.lint(VALID)]
    for result in results:
        fields = {key: getattr(result, key) for key in ENVELOPE if getattr(result, key) is not None}
        assert set(schema["required"]) <= set(fields)
        assert fields["schema_version"] == properties["schema_version"]["const"]
        assert fields["format"] in properties["format"]["enum"]
        assert fields["verdict"] in properties["verdict"]["enum"]
        if result.verdict == "valid":
            assert not {"code", "message", "offset"} & set(fields)
        else:
            assert {"code", "message", "tensor"} <= set(fields)
        if "offset" in fields:
            assert isinstance(fields["offset"], int) and fields["offset"] >= 0


# ------------------------------------------------------------ one exit status per verdict
def torch_corpus_files():
    for folder in ("valid", "refuse", "bypass"):
        yield from sorted(p for p in (TORCH / folder).rglob("*.pt"))


@pytest.mark.parametrize("path", list(torch_corpus_files()), ids=lambda p: p.name)
def test_scan_ok_and_exit_status_follow_the_verdict_word(cli, path):
    # clean and needs-key: ok and exit 0; names-code and cannot-prove-safe: not ok, exit 1.
    result = stguard.scan(path)
    safe = result.scan_verdict in ("clean", "needs-key")
    assert result.ok == safe and result.verdict == ("valid" if safe else "refused")
    assert run_cli(cli, "scan", str(path)).returncode == (0 if safe else 1)
    if path.parent.name == "bypass":
        assert not safe and result.code == path.name.split("__")[0]


def test_stacked_pickle_is_not_ok(tmp_path, cli):
    # Accept: one bare pickle, read to its STOP. Reject: a second one after it.
    single = tmp_path / "list.pkl"
    single.write_bytes(b"\x80\x02].")
    stacked = tmp_path / "stacked.pkl"
    stacked.write_bytes(b"\x80\x02]." + b"\x80\x02cbuiltins\nprint\n(X\x01\x00\x00\x00mtR.")
    assert stguard.scan(single).ok and stguard.scan(single).scan_verdict == "clean"
    assert stguard.check(single).ok
    result = stguard.scan(stacked)
    assert (result.ok, result.scan_verdict, result.code) == (False, "cannot-prove-safe",
                                                             "TrailingContent")
    assert not stguard.check(stacked).ok
    assert run_cli(cli, "scan", str(stacked)).returncode == 1
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.convert(stacked, tmp_path / "out.safetensors")
    assert raised.value.code == "TrailingContent"


def test_list_of_state_dicts_is_safe_but_does_not_convert(tmp_path, cli):
    result = stguard.scan(TORCH / "refuse" / "NotAStateDict__not_a_dict.pt")
    assert result.ok and result.scan_verdict == "needs-key" and result.key_paths == []
    assert "conversion needs a state dict" in result.description
    path = str(TORCH / "refuse" / "NotAStateDict__not_a_dict.pt")
    assert run_cli(cli, "scan", path).returncode == 0
    assert run_cli(cli, "scan", "--require-convertible", path).returncode == 1
