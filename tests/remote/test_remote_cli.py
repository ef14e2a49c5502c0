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
    # --stats reads all the data: a usage error saying what to do, not a failed read.
    proc = run("inspect", "--stats", server.url("ok", "sample.safetensors"))
    assert proc.returncode == 2 and "download the file first" in proc.stderr, proc.stderr


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


def safetensors_header(name, data_len):
    header = json.dumps({name: {"dtype": "U8", "shape": [data_len],
                                "data_offsets": [0, data_len]}}).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header


def safetensors_named(name, data_len):
    return safetensors_header(name, data_len) + bytes(data_len)


# A bare pickle calling os.system: names code.
EVIL_PICKLE = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03."


@pytest.fixture(scope="module")
def repos(files):
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    big = safetensors_header("b", 256 << 20)
    index = {"metadata": {"total_size": 300},
             "weight_map": {"a": shards[0], "b": shards[1]}}
    folder = {
        "config.json": b'{"model_type": "x", "tie_word_embeddings": true}',
        "model.safetensors.index.json": json.dumps(index).encode(),
        shards[0]: safetensors_named("a", 100),
        # 256 MiB of weights: the check reads the header, never the data.
        shards[1]: VirtualFile(big, len(big) + (256 << 20)),
        "sub/extra.pt": files["small.pt"],
    }
    out = {"folder": folder, "badfolder": {**folder, "pytorch_model.bin": EVIL_PICKLE},
           "gated": folder, "offhost": folder, "evil": {"../x": b"1"}}
    with tempfile.TemporaryDirectory() as tmp:
        for repo in ("folder", "badfolder"):
            for path, data in out[repo].items():
                os.makedirs(os.path.dirname(os.path.join(tmp, repo, path)), exist_ok=True)
                with open(os.path.join(tmp, repo, path), "wb") as f:
                    if isinstance(data, VirtualFile):  # sparse: the header, then a hole
                        f.write(data.head)
                        f.truncate(data.size)
                    else:
                        f.write(data)
        out["_dir"] = tmp
        yield out


@pytest.fixture(scope="module")
def hub(repos):
    srv = LoopbackServer({}, {k: v for k, v in repos.items() if not k.startswith("_")})
    yield srv
    srv.close()


@pytest.mark.parametrize("repo,verdict", [("folder", "valid"), ("badfolder", "refused")])
def test_a_whole_repo_gets_the_local_folders_verdict_without_its_weights(hub, repos, repo,
                                                                         verdict):
    local_status, local = envelope(os.path.join(repos["_dir"], repo))
    before, mark = hub.bytes_sent, len(hub.requests)
    with tempfile.TemporaryDirectory() as tmp:
        status, remote = envelope("hf://org/" + repo,
                                  env={"HF_ENDPOINT": hub.endpoint, "TMPDIR": tmp})
        assert os.listdir(tmp) == []  # the layout of the repo's files is removed
    assert (status, remote["verdict"]) == (local_status, verdict), remote
    assert {k: remote.get(k) for k in SAME + ("member",)} == \
        {k: local.get(k) for k in SAME + ("member",)}
    listing = [p for p, _ in hub.requests[mark:] if p.startswith("/api/")]
    assert listing[0] == "/api/models/org/%s/tree/main?recursive=true" % repo
    assert len(listing) >= 3  # 2 entries a page: the Link header was followed
    # Every file's first block at most: not the 256 MiB of weights.
    assert hub.bytes_sent - before < 6 * (64 << 10), hub.bytes_sent - before


def test_a_gated_repo_listing_asks_for_a_token(hub):
    env = {"HF_ENDPOINT": hub.endpoint}
    status, result = envelope("hf://org/gated", env=env)
    assert status == 2 and "HTTP 401" in result["message"] and "set HF_TOKEN" in result["message"]
    status, result = envelope("hf://org/gated", env={**env, "HF_TOKEN": "secret"})
    assert (status, result["verdict"]) == (0, "valid"), result


@pytest.mark.parametrize("repo,words", [
    ("malformed", "listing"),
    ("evil", "path is empty, absolute, holds '.', '..'"),
    ("offhost", "next page is not on the endpoint"),
    ("missing", "HTTP 404"),
])
def test_a_listing_that_cannot_be_trusted_is_an_error(hub, repo, words):
    status, result = envelope("hf://org/" + repo, env={"HF_ENDPOINT": hub.endpoint})
    assert (status, result["verdict"]) == (2, "error"), result
    assert words in result["message"], result["message"]
    if repo == "offhost":
        assert not any("localhost" in h.get("Host", "") and p.startswith("/api/")
                       for p, h in hub.requests)


def test_offline_makes_a_whole_repo_an_error(hub):
    status, result = envelope("hf://org/folder",
                              env={"HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "1"})
    assert status == 2 and "HF_HUB_OFFLINE" in result["message"]


def json_lines(proc):
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_scan_of_a_url_and_a_repo_reports_as_a_local_scan(hub, repos, server, files):
    env = {"HF_ENDPOINT": hub.endpoint}
    local = run("scan", "--json", os.path.join(repos["_dir"], "badfolder"))
    remote = run("scan", "--json", "hf://org/badfolder", env=env)
    assert remote.returncode == local.returncode == 1, remote.stdout + remote.stderr
    name = lambda r: r["file"].rsplit("/", 1)[-1]  # noqa: E731
    assert [(name(r), r["verdict"]) for r in json_lines(remote)] == \
        [(name(r), r["verdict"]) for r in json_lines(local)]
    for url_file in ("small.pt", "flipped.pt"):
        local = run("scan", "--json", os.path.join(files["_dir"], url_file))
        remote = run("scan", "--json", server.url("ok", url_file))
        assert remote.returncode == local.returncode, remote.stdout + remote.stderr
        assert json_lines(remote)[0]["verdict"] == json_lines(local)[0]["verdict"]
    text = run("scan", "hf://org/folder", env=env)
    assert text.returncode == 0 and "sub/extra.pt" in text.stdout, text.stdout + text.stderr


def test_lint_of_a_repo_is_the_local_folders_and_many_urls_run_together(hub, repos):
    env = {"HF_ENDPOINT": hub.endpoint}
    local = run("lint", "--json", os.path.join(repos["_dir"], "folder"))
    remote = run("lint", "--json", "hf://org/folder", env=env)
    assert remote.returncode == local.returncode, remote.stdout + remote.stderr
    keep = ("verdict", "family", "tensors", "shards", "errors", "warnings")
    assert {k: json_lines(remote)[0].get(k) for k in keep} == \
        {k: json_lines(local)[0].get(k) for k in keep}
    single = run("lint", "--json", "hf://org/folder/model-00001-of-00002.safetensors", env=env)
    assert single.returncode == 2 and "whole repo" in single.stdout
    both = run("check", "--json", "-j", "2", "hf://org/folder", "hf://org/badfolder", env=env)
    assert both.returncode == 1
    assert [r["verdict"] for r in json_lines(both)] == ["valid", "refused"]


def test_convert_of_a_url_is_a_local_copys_and_leaves_nothing_when_it_fails(server, files):
    with tempfile.TemporaryDirectory() as tmp:
        local_out, remote_out = os.path.join(tmp, "local.safetensors"), os.path.join(tmp, "r.safetensors")
        assert run("convert", os.path.join(files["_dir"], "small.pt"), local_out).returncode == 0
        proc = run("convert", server.url("ok", "small.pt"), remote_out)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert open(remote_out, "rb").read() == open(local_out, "rb").read()
        assert sorted(os.listdir(tmp)) == ["local.safetensors", "r.safetensors"]
        for mode, name, status, words in [("ok", "flipped.pt", 1, "ZipChecksum"),
                                          ("short200", "small.pt", 2, "closed early"),
                                          ("404", "small.pt", 2, "HTTP 404")]:
            out = os.path.join(tmp, "x.safetensors")
            proc = run("convert", "--json", server.url(mode, name), out)
            assert proc.returncode == status, (mode, proc.stdout + proc.stderr)
            assert words in proc.stdout, (mode, proc.stdout)
            assert server.url(mode, name) in proc.stdout
            assert sorted(os.listdir(tmp)) == ["local.safetensors", "r.safetensors"], mode
