# SPDX-License-Identifier: Apache-2.0
"""Every file in corpus/invalid/ raises SafetensorError with the code in its name, the
offset and message the stguard command prints, from every entry point."""

import subprocess

import pytest

import stguard
import stguard.numpy as snp
from conftest import CORPUS, raw_file

INVALID = sorted((CORPUS / "invalid").glob("*.safetensors"))


def test_corpus_is_there():
    assert len(INVALID) >= 40


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_file_raises_its_code(path):
    expected_code = path.name.split("__")[0]
    for framework in ("np", "pt"):
        with pytest.raises(stguard.SafetensorError) as raised:
            stguard.safe_open(path, framework=framework)
        assert raised.value.code == expected_code
        assert str(raised.value).startswith(f"{expected_code} at byte {raised.value.offset}: ")
    with pytest.raises(stguard.SafetensorError) as from_file:
        snp.load_file(path)
    # The same bytes from memory give the same error at the same offset.
    with pytest.raises(stguard.SafetensorError) as from_bytes:
        snp.load(path.read_bytes())
    assert (from_bytes.value.code, from_bytes.value.offset, from_bytes.value.tensor) == \
        (from_file.value.code, from_file.value.offset, from_file.value.tensor)
    result = stguard.check(path)
    assert not result.ok and not result
    assert result.error.code == expected_code
    assert result.tensors == 0


@pytest.mark.parametrize("path", INVALID[::5], ids=lambda p: p.name)
def test_message_matches_the_command(cli, path):
    line = subprocess.run([cli, "check", str(path)], capture_output=True, text=True).stdout
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.safe_open(path, framework="np")
    # The command names the verdict ("invalid") where Python's check gives the same word.
    assert line.strip() == f"{path}: {stguard.check(path).verdict}: {raised.value}"


def test_error_fields():
    # A duplicate key: the tensor is named, the offset is the second key's position.
    header = '{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},' \
             '"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.load(raw_file(header, b"x"))
    assert raised.value.code == "DuplicateKey"
    assert raised.value.tensor == "w"
    assert raised.value.offset == 8 + header.rindex('"w"')
    assert isinstance(raised.value, Exception)
    # "__metadata__": null is refused (the reference reads it as no metadata).
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.load(raw_file('{"__metadata__":null}'))
    assert raised.value.code == "MetadataNotObject" and raised.value.tensor is None


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(stguard.SafetensorError) as raised:
        stguard.safe_open(tmp_path / "absent.safetensors", "np")
    assert raised.value.code == "IoError"
    with pytest.raises(stguard.SafetensorError) as raised:
        snp.load_file(tmp_path)
    assert raised.value.code == "NotARegularFile"


def test_check_valid_file_and_folder(tmp_path):
    result = stguard.check(CORPUS / "sample.safetensors")
    assert result.ok and result.error is None and result.files == 1
    assert result.tensors > 0 and result.header_size > 0
    snp.save_file({"a": snp.load_file(CORPUS / "sample.safetensors")[
        stguard.safe_open(CORPUS / "sample.safetensors", "np").keys()[0]]},
        tmp_path / "model.safetensors")
    folder = stguard.check(tmp_path)
    assert folder.ok and folder.tensors == 1 and folder.files == 1
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80")
    warned = stguard.check(tmp_path)
    assert warned.ok and [w.kind for w in warned.warnings] == ["pickle-file"]


def test_safe_open_unknown_name_and_closed_handle():
    f = stguard.safe_open(CORPUS / "sample.safetensors", "np")
    with pytest.raises(stguard.SafetensorError):
        f.get_tensor("no such tensor")
    name = f.keys()[0]
    f.close()
    with pytest.raises(stguard.SafetensorError):
        f.get_tensor(name)
    with pytest.raises(ValueError):
        stguard.safe_open(CORPUS / "sample.safetensors", "keras")
