# SPDX-License-Identifier: Apache-2.0
"""End-to-end, as real processes: folders of PyTorch files.

- `convert DIR OUTDIR` never writes through a link in OUTDIR, never removes a file it did
  not create, and refuses input shards that link out of DIR (unless
  --allow-external-symlinks).
- `check DIR` fails closed: a pickle-bearing file the static scan cannot prove safe makes
  the folder invalid (exit 1) with the reason; torch.load really runs each payload used
  here (it only touches a marker file).
- `scan DIR` and `check DIR` find pickle-bearing files by content, in subfolders too, and
  find none in a realistic model folder's text and image files.

Run by ctest as /usr/bin/python3 -m pytest with STGUARD_CLI set; needs Debian's torch.
"""
import io
import json
import os
import pathlib
import pickle
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib

import pytest

torch = pytest.importorskip("torch", reason="torch (python3-torch) is the reference loader")

CLI = os.environ["STGUARD_CLI"]
CORPUS = pathlib.Path(os.environ["STGUARD_TORCH_CORPUS"])
SAMPLE = CORPUS.parent / "sample.safetensors"


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


class TouchMarker:
    """Pickles to os.system('touch MARKER'): what a malicious checkpoint does, harmlessly."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, ("touch " + self.marker,))


def torch_load_runs(path, marker):
    """Loads `path` with torch.load (weights_only off, as torch 1.13 does) in a child
    process and says whether the payload touched `marker`."""
    if marker.exists():
        marker.unlink()
    subprocess.run([sys.executable, "-c",
                    "import sys, torch\ntry:\n torch.load(sys.argv[1])\nexcept Exception:\n pass",
                    str(path)], capture_output=True)
    ran = marker.exists()
    if ran:
        marker.unlink()
    return ran


def protocol0_payload(marker):
    return b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."


def deflated_zip_payload(path, marker):
    """A torch ZIP whose data.pkl (calling os.system) is deflated, not stored."""
    plain = path.with_suffix(".stored")
    torch.save({"w": torch.zeros(2), "x": TouchMarker(marker)}, plain)
    with zipfile.ZipFile(plain) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            method = zipfile.ZIP_DEFLATED if info.filename.endswith(".pkl") else zipfile.ZIP_STORED
            zout.writestr(info.filename, zin.read(info.filename), compress_type=method)
    plain.unlink()


def legacy_tar_payload(path, marker):
    """torch's oldest format: a tar whose 'storages' member is unpickled first."""
    data = pickle.dumps(TouchMarker(marker), protocol=2)
    with tarfile.open(path, "w") as tar:
        for name in ("sys_info", "storages", "tensors", "pickle"):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def model_folder(path):
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLE, path / "model.safetensors")
    return path


# ---- convert DIR OUTDIR: no writes through links, nothing of the user's removed --------


def one_shard_input(path):
    path.mkdir()
    torch.save({"a": torch.arange(4, dtype=torch.float32)}, path / "pytorch_model.bin")
    return path


def two_shard_input(path, corrupt_second=False):
    path.mkdir()
    torch.save({"a": torch.arange(4, dtype=torch.float32)}, path / "s1.bin")
    second = torch.arange(1000, 1064, dtype=torch.int64)
    torch.save({"b": second}, path / "s2.bin")
    if corrupt_second:  # a storage byte changed: its CRC-32 fails while streaming
        data = bytearray((path / "s2.bin").read_bytes())
        at = data.find(second.numpy().tobytes())
        assert at > 0
        data[at] ^= 0xFF
        (path / "s2.bin").write_bytes(bytes(data))
    index = {"metadata": {}, "weight_map": {"a": "s1.bin", "b": "s2.bin"}}
    (path / "pytorch_model.bin.index.json").write_text(json.dumps(index))
    return path


def test_convert_refuses_a_link_planted_in_outdir(tmp_path):
    source = one_shard_input(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file outside OUTDIR")
    (out / "model.safetensors").symlink_to(victim)
    result = run("convert", source, out)
    # OUTDIR must be new or empty: a planted link is refused before anything is written.
    assert result.returncode == 2 and "not empty" in result.stderr, result.stderr
    assert victim.read_text() == "the user's file outside OUTDIR"
    assert (out / "model.safetensors").is_symlink()  # not removed either
    assert sorted(p.name for p in out.iterdir()) == ["model.safetensors"]  # no temporary left
    # A dangling link is no different: nothing is created where it points.
    (out / "model.safetensors").unlink()
    (out / "model.safetensors").symlink_to(tmp_path / "created_through_link")
    assert run("convert", source, out).returncode == 2
    assert not (tmp_path / "created_through_link").exists()
    # Accept: without the link, the same conversion writes the file in OUTDIR.
    (out / "model.safetensors").unlink()
    result = run("convert", source, out)
    assert result.returncode == 0, result.stderr
    assert (out / "model.safetensors").is_file() and run("check", out).returncode == 0


def test_convert_sharded_link_at_a_shard_name(tmp_path):
    source = two_shard_input(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "model-00002-of-00002.safetensors").symlink_to(victim)
    result = run("convert", source, out)
    assert result.returncode == 2, result.stderr
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["model-00002-of-00002.safetensors"]


def test_refused_conversion_keeps_the_users_files(tmp_path):
    source = two_shard_input(tmp_path / "in", corrupt_second=True)
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "model-00001-of-00002.safetensors"
    mine.write_bytes(b"the user's earlier shard")
    result = run("convert", source, out)
    assert result.returncode == 2 and "not empty" in result.stderr, result.stderr
    assert mine.read_bytes() == b"the user's earlier shard"
    assert sorted(p.name for p in out.iterdir()) == [mine.name]
    # A CRC-32 failure while streaming the second shard: the first, already staged, goes
    # too; the empty folder the user made stays.
    mine.unlink()
    result = run("convert", source, out)
    assert result.returncode == 1 and "ZipChecksum" in result.stderr, result.stderr
    assert list(out.iterdir()) == []  # no temporary, no shard, no index
    # Accept: a valid input fills the folder once every shard is complete.
    good = two_shard_input(tmp_path / "good")
    result = run("convert", good, out)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "model.safetensors.index.json"]
    assert run("check", out).returncode == 0


def test_outdir_named_by_the_user_is_followed(tmp_path):
    source = one_shard_input(tmp_path / "in")
    real = tmp_path / "real_out"
    real.mkdir()
    (tmp_path / "out_link").symlink_to(real)
    result = run("convert", source, tmp_path / "out_link")
    assert result.returncode == 0, result.stderr
    assert (real / "model.safetensors").is_file()


def test_input_shard_linking_out_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    torch.save({"a": torch.ones(2)}, elsewhere / "real.bin")
    source = tmp_path / "in"
    source.mkdir()
    (source / "pytorch_model.bin").symlink_to(elsewhere / "real.bin")
    out = tmp_path / "out"
    out.mkdir()
    result = run("convert", source, out)
    assert result.returncode == 1 and "UnsafeShardName" in result.stderr, result.stderr
    assert list(out.iterdir()) == []
    result = run("convert", source, out, "--allow-external-symlinks")
    assert result.returncode == 0, result.stderr
    # Sharded: a shard named by the index that links out, the same.
    sharded = two_shard_input(tmp_path / "in2")
    (sharded / "s2.bin").unlink()
    torch.save({"b": torch.ones(2)}, elsewhere / "s2.bin")
    (sharded / "s2.bin").symlink_to(elsewhere / "s2.bin")
    out2 = tmp_path / "out2"
    out2.mkdir()
    result = run("convert", sharded, out2)
    assert result.returncode == 1 and "UnsafeShardName" in result.stderr
    assert list(out2.iterdir()) == []
    assert run("convert", sharded, out2, "--allow-external-symlinks").returncode == 0
    # A link that stays inside the folder is fine.
    inside = tmp_path / "in3"
    inside.mkdir()
    torch.save({"a": torch.ones(2)}, inside / "weights.bin")
    (inside / "pytorch_model.bin").symlink_to("weights.bin")
    assert run("convert", inside, tmp_path / "out3").returncode in (0,)


# ---- check DIR fails closed ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["protocol0", "deflated_zip", "legacy_tar"])
def test_check_dir_fails_closed(kind, tmp_path):
    marker = tmp_path / "marker"
    folder = model_folder(tmp_path / "model")
    path = folder / "pytorch_model.bin"
    if kind == "protocol0":
        path.write_bytes(protocol0_payload(marker))
    elif kind == "deflated_zip":
        deflated_zip_payload(path, marker)
    else:
        legacy_tar_payload(path, marker)
    assert torch_load_runs(path, marker), "the payload must be one torch.load runs"
    result = run("check", folder)
    assert result.returncode == 1, result.stdout
    assert "pytorch_model.bin" in result.stdout and "refused" in result.stdout
    assert "cannot be proven safe" in result.stdout or "names code" in result.stdout
    report = json.loads(run("check", "--json", folder).stdout)
    assert report["ok"] is False and "pytorch_model.bin" in report["error"]["context"]
    scan = json.loads(run("scan", "--json", path).stdout)
    assert scan["scan_verdict"] in ("cannot-prove-safe", "names-code") and scan["verdict"] == "refused"
    assert not marker.exists()
    # Accept: the same folder with a clean checkpoint there is valid.
    torch.save({"w": torch.ones(2)}, path)
    result = run("check", folder)
    assert result.returncode == 0, result.stdout
    assert "clean" in result.stdout


def test_verdict_vocabulary_in_scan_and_check(tmp_path):
    folder = model_folder(tmp_path / "model")
    shutil.copy(CORPUS / "valid" / "training.zip.pt", folder / "training.pt")
    scan = json.loads(run("scan", "--json", folder / "training.pt").stdout)
    assert scan["scan_verdict"] == "needs-key" and scan["verdict"] == "valid" and scan["key_paths"] == [["state_dict"]]
    result = run("check", folder)  # needs-key is safe: a warning, not a failure
    assert result.returncode == 0 and "needs --key" in result.stdout and "--key state_dict" in result.stdout
    shutil.copy(CORPUS / "refuse" / "PickleGlobalRefused__zip_os_system.pt", folder / "evil.pt")
    scan = json.loads(run("scan", "--json", folder / "evil.pt").stdout)
    assert scan["scan_verdict"] == "names-code" and scan["verdict"] == "refused"
    result = run("check", folder)
    assert result.returncode == 1 and "names code" in result.stdout
    clean = json.loads(run("scan", "--json", CORPUS / "valid" / "dtypes.zip.pt").stdout)
    assert clean["scan_verdict"] == "clean" and clean["verdict"] == "valid"


# ---- scan DIR / check DIR find pickles by content, in subfolders -----------------------


def test_pickles_found_by_content_and_in_subfolders(tmp_path):
    folder = model_folder(tmp_path / "model")
    clean = CORPUS / "valid" / "dtypes.zip.pt"
    (folder / "checkpoint-500").mkdir()
    (folder / "original").mkdir()
    shutil.copy(clean, folder / "checkpoint-500" / "pytorch_model.bin")
    shutil.copy(CORPUS / "valid" / "dtypes.legacy.pt", folder / "original" / "consolidated.00.pth")
    shutil.copy(clean, folder / "weights.data")  # no telling name at all
    (folder / "state.p0").write_bytes(pickle.dumps({"step": 3}, protocol=0))
    (folder / "state.p1").write_bytes(pickle.dumps({"step": 3}, protocol=1))
    legacy_tar_payload(folder / "checkpoint.pth.tar", tmp_path / "marker")
    result = run("scan", "--json", folder)
    found = {pathlib.Path(json.loads(line)["file"]).relative_to(folder).as_posix(): json.loads(line)
             for line in result.stdout.splitlines()}
    assert set(found) == {"checkpoint-500/pytorch_model.bin", "original/consolidated.00.pth",
                          "weights.data", "state.p0", "state.p1", "checkpoint.pth.tar"}
    assert found["checkpoint.pth.tar"]["format"] == "tar"
    assert found["original/consolidated.00.pth"]["format"] == "pytorch-legacy"
    assert found["state.p0"]["format"] == "pickle"
    assert found["checkpoint-500/pytorch_model.bin"]["scan_verdict"] == "clean"
    result = run("check", folder)
    assert result.returncode == 1 and "checkpoint.pth.tar" in result.stdout
    (folder / "checkpoint.pth.tar").unlink()
    (folder / "state.p0").unlink()
    (folder / "state.p1").unlink()
    result = run("check", folder)
    assert result.returncode == 0, result.stdout
    assert "checkpoint-500/pytorch_model.bin" in result.stdout
    # A malicious file deep in a subfolder fails the folder too.
    shutil.copy(CORPUS / "refuse" / "PickleGlobalRefused__zip_os_system.pt",
                folder / "checkpoint-500" / "optimizer.pt")
    result = run("check", folder)
    assert result.returncode == 1 and "checkpoint-500/optimizer.pt" in result.stdout


def test_walk_does_not_follow_links_out(tmp_path):
    folder = model_folder(tmp_path / "model")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(CORPUS / "refuse" / "PickleGlobalRefused__zip_os_system.pt", outside / "evil.pt")
    (folder / "linked_dir").symlink_to(outside, target_is_directory=True)
    result = run("scan", folder)  # a link to a folder is not walked: it is refused, named
    assert result.returncode == 1 and "linked_dir" in result.stdout, result.stdout
    assert "--allow-external-symlinks" in result.stdout and "evil.pt" not in result.stdout
    (folder / "weights.pt").symlink_to(outside / "evil.pt")
    result = run("scan", folder)
    assert result.returncode == 1 and "UnsafeShardName" in result.stdout
    assert run("check", folder).returncode == 1
    result = run("scan", folder, "--allow-external-symlinks")
    assert result.returncode == 1 and "names code" in result.stdout


def realistic_model_folder(path):
    """The files a Hugging Face model folder holds besides its weights, with realistic
    content (tokenizers of BERT, GPT-2 and Llama kinds, configs, a model card, images)."""
    path.mkdir()
    vocab = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]",
             "[MASK]", "!", "\"", "#", "$", "(", ")", ".", "0", "1", "a", "the", "##s", "##ing"]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (path / "merges.txt").write_text("#version: 0.2\nĠ t\nĠ a\nh e\ni n\nr e\no n\nĠt he\ne r\n")
    (path / "vocab.json").write_text(json.dumps({"!": 0, "\"": 1, "#": 2, "Ġthe": 3}))
    (path / "tokenizer.json").write_text(json.dumps({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 0, "content": "<unk>", "special": True}],
        "normalizer": None, "pre_tokenizer": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": {"<unk>": 0, "a": 1}, "merges": ["Ġ t"]}}, indent=2))
    (path / "tokenizer_config.json").write_text('{"model_max_length": 2048, "padding_side": "left"}')
    (path / "special_tokens_map.json").write_text('{"bos_token": "<s>", "eos_token": "</s>"}')
    (path / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32,
        "torch_dtype": "bfloat16", "tie_word_embeddings": False}, indent=2))
    (path / "generation_config.json").write_text('{"do_sample": true, "temperature": 0.6}\n')
    (path / "README.md").write_text(
        "---\nlicense: apache-2.0\nlanguage:\n- en\npipeline_tag: text-generation\n---\n\n"
        "# Model card\n\nThis model was trained on (a lot of) text.\n\n```python\n"
        "from transformers import AutoModel\nmodel = AutoModel.from_pretrained('x')\n```\n")
    (path / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n"
                                         "*.safetensors filter=lfs diff=lfs merge=lfs -text\n")
    (path / "LICENSE").write_text("Apache License\nVersion 2.0, January 2004\n")
    (path / "requirements.txt").write_text("certifi==2024.2.2\ncharset-normalizer==3.3.2\n"
                                           "torch>=2.0\n")
    (path / "notes.txt").write_text("cool project\nsecond line\n(see above)\n")
    # A sentencepiece model is a protobuf: field 1, wire type 2 (0x0a).
    (path / "tokenizer.model").write_bytes(b"\x0a\x0b\x0a\x05<unk>\x15\x00\x00\x00\x00\x18\x02" * 40)
    # A PNG (signature, IHDR, IDAT, IEND) and a JPEG and GIF header.
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(b"\x00" + b"\xff\x00\x00" * 2 + b"\x00" + b"\x00" * 6)) +
           chunk(b"IEND", b""))
    (path / "diagram.png").write_bytes(png)
    (path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01"
                                     b"\x00\x01\x00\x00" + bytes(range(256)) + b"\xff\xd9")
    (path / "anim.gif").write_bytes(b"GIF89a\x02\x00\x02\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
                                    b"!\xf9\x04\x00\x00\x00\x00\x00,\x00\x00\x00\x00\x02\x00\x02"
                                    b"\x00\x00\x02\x02D\x01\x00;")
    shutil.copy(SAMPLE, path / "model.safetensors")
    return path


def test_no_false_positives_in_a_realistic_model_folder(tmp_path):
    folder = realistic_model_folder(tmp_path / "model")
    # The corpus's JSON and safetensors files, as further realistic content.
    extra = folder / "corpus"
    extra.mkdir()
    for source in sorted((CORPUS.parent / "json").glob("*"))[:200]:
        if source.is_file():
            shutil.copy(source, extra / source.name)
    result = run("scan", folder)
    assert result.returncode == 0 and "no pickle-bearing files" in result.stdout, result.stdout
    result = run("check", "--json", folder)
    report = json.loads(result.stdout)
    assert report["ok"] is True, report
    assert not [w for w in report["warnings"] if w["kind"] == "pickle-file"]
    # Reject: the same folder with a protocol-0 pickle under an innocent name.
    (folder / "notes.txt").write_bytes(protocol0_payload(tmp_path / "marker"))
    result = run("scan", folder)
    assert result.returncode == 1 and "notes.txt" in result.stdout


def test_walk_bounds(tmp_path):
    folder = model_folder(tmp_path / "model")
    deep = folder
    for level in range(10):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    result = run("scan", folder)
    assert result.returncode == 1 and "FolderTooLarge" in result.stderr + result.stdout
    assert run("check", folder).returncode == 1
    shutil.rmtree(folder / "d0" / "d1" / "d2" / "d3" / "d4" / "d5" / "d6")
    assert run("scan", folder).returncode == 0  # 7 levels: within the bound of 8
