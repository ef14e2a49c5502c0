# SPDX-License-Identifier: Apache-2.0
"""stguard check/inspect URL against a loopback server in every mode of misbehaviour:
verdicts equal a local copy's; every inconsistency is an error (exit 2) naming it; the
budget holds whatever the server sends; hf:// names, the token and the CDN redirect."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from loopback_server import LoopbackServer, VirtualFile  # noqa: E402

CLI = os.environ["STGUARD_CLI"]
CORPUS = os.environ["STGUARD_CORPUS"]
MIB = 1 << 20


def safetensors(data_len, metadata_len=0):
    header = {"w": {"dtype": "U8", "shape": [data_len], "data_offsets": [0, data_len]}}
    if metadata_len:
        header["__metadata__"] = {"note": "x" * metadata_len}
    header = json.dumps(header).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + bytes(data_len)


def flip_first_storage_byte(zip_bytes):
    data = bytearray(zip_bytes)
    at = data.find(b"PK\x03\x04")
    while at >= 0:
        name_len, extra_len = struct.unpack_from("<HH", data, at + 26)
        if bytes(data[at + 30:at + 30 + name_len]).endswith(b"/data/0"):
            data[at + 30 + name_len + extra_len] ^= 1
            return bytes(data)
        at = data.find(b"PK\x03\x04", at + 4)
    raise AssertionError("no data/0 record")


@pytest.fixture(scope="module")
def files():
    small_pt = open(os.path.join(CORPUS, "torch/valid/dtypes.zip.pt"), "rb").read()
    big_pt = open(os.path.join(CORPUS, "torch/refuse/PickleFrameAmbiguous__long_frame_legacy.pt"),
                  "rb").read()
    out = {
        "sample.safetensors": open(os.path.join(CORPUS, "sample.safetensors"), "rb").read(),
        "small.pt": small_pt,
        "flipped.pt": flip_first_storage_byte(small_pt),
        "legacy.pt": big_pt,
        "big.safetensors": safetensors(MIB),
        # A header past the first block: its check needs a second request.
        "bighdr.safetensors": safetensors(MIB, 100000),
        "model.safetensors": safetensors(1000),
    }
    with tempfile.TemporaryDirectory() as tmp:
        # A PyTorch ZIP larger than the first block (its storage's CRC is not read remotely).
        path = os.path.join(tmp, "big.pt")
        try:
            import torch
            torch.save({"w": torch.zeros(256 * 1024, dtype=torch.float32)}, path)
            out["big.pt"] = open(path, "rb").read()
        except ImportError:
            pass
        for name, data in out.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        out["_dir"] = tmp
        yield out


@pytest.fixture(scope="module")
def server(files):
    served = {k: v for k, v in files.items() if not k.startswith("_")}
    # A ZIP's first records, then zeros to 2 GiB: the sniff reads its tail.
    served["huge.bin"] = VirtualFile(files["small.pt"], 2 << 30)
    srv = LoopbackServer(served)
    yield srv
    srv.close()


def run(*args, env=None, timeout=60):
    full_env = dict(os.environ)
    for name in ("HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN_PATH"):
        full_env.pop(name, None)
    full_env["HF_HOME"] = "/nonexistent-stguard-test"
    full_env.update(env or {})
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout)


def envelope(*args, env=None):
    proc = run("check", "--json", *args, env=env)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return proc.returncode, lines[0]


SAME = ("verdict", "format", "code", "offset", "tensor")


@pytest.mark.parametrize("name", ["sample.safetensors", "small.pt", "flipped.pt", "legacy.pt",
                                  "big.safetensors", "bighdr.safetensors", "big.pt"])
def test_ok_server_gives_the_local_verdict(files, server, name):
    if name not in files:
        pytest.skip("needs torch to write big.pt")
    local_status, local = envelope(os.path.join(files["_dir"], name))
    status, remote = envelope(server.url("ok", name))
    assert status == local_status
    assert {k: remote.get(k) for k in SAME} == {k: local.get(k) for k in SAME}
    assert "unchecked" not in local
    if name == "big.pt":
        assert remote["unchecked"] == ["1 storage checksum"]
        text = run("check", server.url("ok", name)).stdout
        assert "valid (remote: 1 storage checksum not read)" in text
    else:
        assert "unchecked" not in remote  # received whole: every check ran


def test_a_flipped_storage_byte_is_refused_by_url(server):
    status, result = envelope(server.url("ok", "flipped.pt"))
    assert (status, result["verdict"], result["code"]) == (1, "refused", "ZipChecksum")


def test_inspect_reads_a_url(server):
    proc = run("inspect", "--json", server.url("ok", "sample.safetensors"))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "valid"


@pytest.mark.parametrize("mode,words", [
    ("wrongcr", "Content-Range names other bytes"),
    ("total", "size changed between requests"),
    ("shorthonest", "closed early"),
    ("shortlying", "differs from its Content-Range"),
    ("nocr", "206 response without Content-Range"),
    ("404", "HTTP 404"),
    ("once", "does not honour range requests"),
])
def test_inconsistent_servers_are_errors_naming_why(server, mode, words):
    status, result = envelope(server.url(mode, "bighdr.safetensors"))
    assert status == 2, result
    assert result["verdict"] == "error"
    assert words in result["message"], result["message"]


def test_a_server_ignoring_range_is_read_whole_within_the_budget(server):
    for mode in ("ignore", "whole206"):
        status, result = envelope(server.url(mode, "bighdr.safetensors"))
        assert (status, result["verdict"]) == (0, "valid"), result
        assert "unchecked" not in result


def test_two_gibibytes_of_whole_bodies_cost_the_budget_at_most(server):
    for mode in ("ignore", "whole206", "once"):
        before = server.bytes_sent
        status, result = envelope(server.url(mode, "huge.bin"))
        sent = server.bytes_sent - before
        assert status == 2, result
        assert "does not honour range requests" in result["message"], result["message"]
        # The client stops at its block; what the kernel buffers is all the server writes.
        assert sent < 16 * MIB, (mode, sent)


def test_redirects_keep_the_range_same_and_cross_host(server):
    for mode in ("redir", "xredir"):
        mark = len(server.requests)
        status, result = envelope(server.url(mode, "big.safetensors"))
        assert (status, result["verdict"]) == (0, "valid"), result
        followed = [h for p, h in server.requests[mark:] if p.startswith("/m/ok/")]
        assert followed and all(h.get("Range", "").startswith("bytes=") for h in followed)


def test_a_stalled_server_times_out(server):
    start = time.monotonic()
    proc = run("check", "--timeout", "1", server.url("stall", "big.safetensors"))
    assert proc.returncode == 2
    assert "timed out" in proc.stdout + proc.stderr
    assert time.monotonic() - start < 4.5


def test_hf_names_resolve_on_the_endpoint_and_the_token_stays_there(server):
    env = {"HF_ENDPOINT": server.endpoint}
    status, result = envelope("hf://org/gated/model.safetensors", env=env)
    assert status == 2
    assert "HTTP 401" in result["message"] and "set HF_TOKEN" in result["message"]
    mark = len(server.requests)
    status, result = envelope("hf://org/gated/model.safetensors",
                              env={**env, "HF_TOKEN": "secret"})
    assert (status, result["verdict"]) == (0, "valid"), result
    seen = server.requests[mark:]
    assert seen[0][0] == "/org/gated/resolve/main/model.safetensors"
    assert seen[0][1].get("Authorization") == "Bearer secret"
    cdn = [h for p, h in seen if p.startswith("/cdn/")]
    assert cdn and all("Authorization" not in h and "Range" in h for h in cdn)


def test_hf_token_from_the_token_file_and_revisions(server, files):
    token_path = os.path.join(files["_dir"], "token")
    with open(token_path, "w") as f:
        f.write("secret\n")
    mark = len(server.requests)
    status, result = envelope("hf://org/gated@refs/pr/1/model.safetensors",
                              env={"HF_ENDPOINT": server.endpoint, "HF_TOKEN_PATH": token_path})
    assert (status, result["verdict"]) == (0, "valid"), result
    assert server.requests[mark][0] == "/org/gated/resolve/refs%2Fpr%2F1/model.safetensors"


def test_offline_makes_remote_inputs_an_error(server):
    status, result = envelope(server.url("ok", "sample.safetensors"),
                              env={"HF_HUB_OFFLINE": "1"})
    assert status == 2 and "HF_HUB_OFFLINE" in result["message"]


def test_a_whole_repo_is_not_read_by_this_build(server):
    status, result = envelope("hf://org/name", env={"HF_ENDPOINT": server.endpoint})
    assert status == 2 and "whole repo" in result["message"]
