# SPDX-License-Identifier: Apache-2.0
"""stguard.check and stguard.inspect of a URL: the same policy as the command line,
against the loopback server of tests/remote/ (nothing leaves the machine)."""
import json
import os
import struct
import sys

import pytest

import stguard

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "remote"))
from loopback_server import LoopbackServer, VirtualFile  # noqa: E402


def safetensors(data_len, metadata_len=0):
    header = {"w": {"dtype": "U8", "shape": [data_len], "data_offsets": [0, data_len]}}
    if metadata_len:
        header["__metadata__"] = {"note": "x" * metadata_len}
    header = json.dumps(header).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + bytes(data_len)


@pytest.fixture(scope="module")
def server():
    small_pt = open(os.path.join(ROOT, "corpus", "torch", "valid", "dtypes.zip.pt"), "rb").read()
    # bighdr: a header past the first 64 KiB block, so its check needs a second request.
    srv = LoopbackServer({"model.safetensors": safetensors(1 << 20), "small.pt": small_pt,
                          "bighdr.safetensors": safetensors(1 << 20, 100000),
                          "huge.bin": VirtualFile(small_pt, 2 << 30)})
    yield srv
    srv.close()


def test_check_reads_a_url_as_the_cli_does(server):
    result = stguard.check(server.url("ok", "model.safetensors"))
    if result.verdict == "error" and "without URL support" in (result.message or ""):
        pytest.skip("built without libcurl")
    assert result.ok, result.message
    assert result.tensors == 1 and result.unchecked == ()
    assert stguard.check(server.url("ok", "small.pt")).ok


def test_inconsistent_servers_are_errors(server):
    for mode, words in [("404", "HTTP 404"), ("wrongcr", "names other bytes"),
                        ("once", "does not honour range requests")]:
        result = stguard.check(server.url(mode, "bighdr.safetensors"))
        if "without URL support" in (result.message or ""):
            pytest.skip("built without libcurl")
        assert result.verdict == "error", mode
        assert words in result.message, result.message
    before = server.bytes_sent
    result = stguard.check(server.url("ignore", "huge.bin"))
    assert result.verdict == "error" and server.bytes_sent - before < (16 << 20)


def test_offline_is_an_error(server, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = stguard.check(server.url("ok", "model.safetensors"))
    assert result.verdict == "error"
    assert "HF_HUB_OFFLINE" in result.message or "without URL support" in result.message


def test_check_reads_a_whole_repo_as_a_folder(monkeypatch):
    small_pt = open(os.path.join(ROOT, "corpus", "torch", "valid", "dtypes.zip.pt"), "rb").read()
    evil = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03."
    repo = {"config.json": b'{"model_type": "x"}', "model.safetensors": safetensors(64),
            "sub/extra.pt": small_pt}
    srv = LoopbackServer({}, {"good": repo, "bad": {**repo, "pytorch_model.bin": evil}})
    try:
        monkeypatch.setenv("HF_ENDPOINT", srv.endpoint)
        good = stguard.check("hf://org/good")
        if "without URL support" in (good.message or ""):
            pytest.skip("built without libcurl")
        assert good.ok, good.message
        bad = stguard.check("hf://org/bad")
        assert bad.verdict == "refused" and "pytorch_model.bin" in (bad.message or ""), bad.message
        assert stguard.check("hf://org/missing").verdict == "error"
    finally:
        srv.close()
