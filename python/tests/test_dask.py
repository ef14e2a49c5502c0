# SPDX-License-Identifier: Apache-2.0
"""stguard.dask on a real LocalCluster: two worker processes on loopback, 10,010 files."""

import os
import subprocess
import sys

import pytest

import stguard
from conftest import raw_file

distributed = pytest.importorskip("distributed")
import stguard.dask  # noqa: E402  (after the skip: it needs distributed)

# A bare pickle calling os.system: loading it runs a shell command.
EVIL = b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03."


def make_tree(root, files=10_000, evil=10):
    """10,000 small safetensors files in 100 folders, and `evil` .bin files hidden among
    them; returns (every path in walk order, the evil ones)."""
    header = '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    valid = raw_file(header + " " * (-len(header) % 8), b"\0" * 8)
    paths, bad = [], []
    for folder in range(files // 100):
        sub = root / f"org{folder % 10}" / f"model{folder}"
        sub.mkdir(parents=True)
        for i in range(100):
            path = sub / f"part{i}.safetensors"
            path.write_bytes(valid)
            paths.append(str(path))
        if folder % (files // 100 // evil) == 3:
            path = sub / "deep" / "pytorch_model.bin"
            path.parent.mkdir()
            path.write_bytes(EVIL)
            paths.append(str(path))
            bad.append(str(path))
    return paths, bad


def test_local_cluster_refuses_exactly_the_malicious_files(tmp_path):
    paths, bad = make_tree(tmp_path)
    assert len(paths) == 10_010 and len(bad) == 10
    expected = stguard.check_many(paths)
    cluster = client = None
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, host="127.0.0.1")
        client = distributed.Client(cluster)
        bag = stguard.dask.check(paths, client=client, partition_size=1000)
        envelopes = bag.compute()
        assert envelopes == expected
        assert [e["file"] for e in envelopes if e["verdict"] == "refused"] == bad
        summary = stguard.dask.summary(bag)
        assert summary["files"] == 10_010
        assert (summary["valid"], summary["refused"], summary["invalid"],
                summary["error"]) == (10_000, 10, 0, 0)
        assert [e["file"] for e in summary["not_valid"]] == bad
        frame = stguard.dask.to_dataframe(bag)
        assert len(frame) == 10_010
        assert sorted(frame[frame.verdict == "refused"].file) == sorted(bad)
        assert set(frame[frame.verdict == "refused"].code) == {"PickleGlobalRefused"}
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def test_import_without_distributed_names_the_package():
    code = ("import sys; sys.modules['distributed'] = None\n"
            "try:\n    import stguard.dask\nexcept ImportError as e:\n"
            "    print(e)\nelse:\n    print('imported')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ))
    assert "'distributed'" in run.stdout, run.stdout + run.stderr


def test_partition_size_must_be_positive():
    with pytest.raises(ValueError, match="partition_size"):
        stguard.dask.check(["x"], partition_size=0)
