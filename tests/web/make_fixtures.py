#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the browser tests' own files into OUT (the corpora cover the rest):

  big.safetensors       one F32 tensor of 16 GiB: an 8-byte prefix, the header, then a
                        hole (truncate), so it takes no disk; valid, and judged by a URL
                        from its first kilobytes
  script_names.safetensors
                        tensor names and a metadata value that are HTML: a page that
                        parsed them would run script
  lintmodel/            a folder with config.json (a tiny GPT-2) and model.safetensors
                        that misses a tensor and has one of the wrong shape, so lint
                        has findings; and extra/bias.npy, which the folder check lists
                        as a file of its own
  bigfolder/            a folder whose check reads for a while, so the page shows its
                        progress: a small model.safetensors and extra/blob.bin, a bare
                        pickle of a 48 MiB string (a hole on disk) that the folder
                        check reads whole (pickle-bearing files in a folder are mapped,
                        and a mapping in the browser is a copy)
  remote2g.safetensors  2 GiB (a hole on disk) whose header of 200 KB needs a second range
                        request after the first 64 KiB: the remote-read policy's server
                        modes are tried on it
  flipped_state.pt      large/state.pt with one storage byte flipped: refused locally
                        (ZipChecksum), valid by URL with its storage checksums unchecked
  large/                files whose verdict needs more than the first 64 KiB, so a URL
                        takes several range requests: a safetensors header of 4,000
                        tensors, a GGUF with a 20,000-string array, and (when numpy and
                        torch are importable) an npz and a torch.save ZIP of a few MiB
Usage: make_fixtures.py OUT
"""

import json
import os
import struct
import sys

BIG_BYTES = 16 * 1024 ** 3
BIG_TORCH_BYTES = 64 * 1024 * 1024

# What the page must show as text: each would run script if it were parsed as HTML.
SCRIPT_NAMES = [
    "<script>window.__stguardInjected = 'script';</script>",
    "<img src=x onerror=\"window.__stguardInjected = 'img'\">",
    "a</td><td>b",
]


def safetensors_bytes(tensors, metadata=None, data=b""):
    """tensors: [(name, dtype, shape, begin, end)] in data order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, begin, end in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def write(path, content):
    with open(path, "wb") as f:
        f.write(content)


def write_big(out):
    path = os.path.join(out, "big.safetensors")
    head = safetensors_bytes([("w", "F32", [BIG_BYTES // 4], 0, BIG_BYTES)],
                             metadata={"format": "pt"})
    write(path, head)
    os.truncate(path, len(head) + BIG_BYTES)


def write_remote_2g(out):
    path = os.path.join(out, "remote2g.safetensors")
    size = 2 * 1024 ** 3
    data = size  # the header's length depends on the digits of the data's: settle it
    for _ in range(3):
        head = safetensors_bytes([("w", "U8", [data], 0, data)], metadata={"pad": "x" * 200000})
        data = size - len(head)
    assert len(head) + data == size
    write(path, head)
    os.truncate(path, size)


def write_flipped_state(out):
    """A copy of large/state.pt with a byte of its last storage flipped (when written)."""
    source = os.path.join(out, "large", "state.pt")
    if not os.path.exists(source):
        return
    content = bytearray(open(source, "rb").read())
    at = content.find(b"/data/7")  # the last storage's local header name
    content[at + 4096] ^= 0xFF
    write(os.path.join(out, "flipped_state.pt"), bytes(content))


def write_script_names(out):
    tensors = [(name, "U8", [1], i, i + 1) for i, name in enumerate(SCRIPT_NAMES)]
    metadata = {"<b>note</b>": "<script>window.__stguardInjected = 'metadata';</script>"}
    write(os.path.join(out, "script_names.safetensors"),
          safetensors_bytes(tensors, metadata, bytes(len(SCRIPT_NAMES))))


def write_lint_model(out):
    folder = os.path.join(out, "lintmodel")
    os.makedirs(folder, exist_ok=True)
    embd, vocab, positions = 8, 16, 4
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": embd,
              "n_head": 2, "n_layer": 1, "n_positions": positions, "vocab_size": vocab}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    shapes = [
        ("wte.weight", [vocab, embd]),
        ("wpe.weight", [positions + 1, embd]),  # wrong: n_positions rows
        ("ln_f.weight", [embd]),
        ("ln_f.bias", [embd]),
        ("h.0.ln_1.weight", [embd]),
        ("h.0.ln_1.bias", [embd]),
        ("h.0.attn.c_attn.weight", [embd, 3 * embd]),
        ("h.0.attn.c_attn.bias", [3 * embd]),
        ("h.0.attn.c_proj.weight", [embd, embd]),
        ("h.0.attn.c_proj.bias", [embd]),
        ("h.0.ln_2.weight", [embd]),
        ("h.0.ln_2.bias", [embd]),
        ("h.0.mlp.c_fc.weight", [embd, 4 * embd]),
        ("h.0.mlp.c_fc.bias", [4 * embd]),
        ("h.0.mlp.c_proj.weight", [4 * embd, embd]),
        # h.0.mlp.c_proj.bias is missing
    ]
    tensors = []
    offset = 0
    for name, shape in shapes:
        size = 4
        for n in shape:
            size *= n
        tensors.append((name, "F32", shape, offset, offset + size))
        offset += size
    write(os.path.join(folder, "model.safetensors"),
          safetensors_bytes(tensors, {"format": "pt"}, bytes(offset)))
    os.makedirs(os.path.join(folder, "extra"), exist_ok=True)
    write(os.path.join(folder, "extra", "bias.npy"), npy_bytes("<f4", (embd,)))


BIG_PICKLE_STRING_BYTES = 48 * 1024 * 1024


def write_big_folder(out):
    folder = os.path.join(out, "bigfolder")
    os.makedirs(os.path.join(folder, "extra"), exist_ok=True)
    write(os.path.join(folder, "model.safetensors"),
          safetensors_bytes([("w", "F32", [2], 0, 8)], {"format": "pt"}, bytes(8)))
    # PROTO 2, BINUNICODE of BIG_PICKLE_STRING_BYTES zero bytes (left as a hole), STOP.
    head = b"\x80\x02X" + struct.pack("<I", BIG_PICKLE_STRING_BYTES)
    with open(os.path.join(folder, "extra", "blob.bin"), "wb") as f:
        f.write(head)
        f.seek(len(head) + BIG_PICKLE_STRING_BYTES)
        f.write(b".")


def npy_bytes(descr, shape):
    """An .npy 1.0 file of zeros: magic, version, header padded to 64 bytes, data."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % n for n in shape).rstrip(" ") if len(shape) != 1
        else "%d," % shape[0])
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    count = 1
    for n in shape:
        count *= n
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
            bytes(count * int(descr[2:])))


def gguf_string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_large_gguf(path):
    """GGUF v3: one F32 tensor of 4 elements after a 20,000-string array."""
    strings = [f"token-{i}" for i in range(20000)]
    kv = gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    kv += gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(strings))
    kv += b"".join(gguf_string(t) for t in strings)
    info = gguf_string("w") + struct.pack("<I", 1) + struct.pack("<Q", 4)
    info += struct.pack("<IQ", 0, 0)  # type F32, offset 0
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 2) + kv + info
    head += bytes(-len(head) % 32)
    write(path, head + struct.pack("<4f", 1, 2, 3, 4) + bytes(16))  # the last tensor padded


def write_large(out):
    """Returns the names of the large files written."""
    folder = os.path.join(out, "large")
    os.makedirs(folder, exist_ok=True)
    written = []
    tensors = [(f"layer.{i}.weight", "F32", [2], 8 * i, 8 * i + 8) for i in range(4000)]
    write(os.path.join(folder, "many_tensors.safetensors"),
          safetensors_bytes(tensors, {"format": "pt"}, bytes(8 * 4000)))
    written.append("many_tensors.safetensors")
    write_large_gguf(os.path.join(folder, "tokens.gguf"))
    written.append("tokens.gguf")
    try:
        import numpy
        import torch
    except ImportError as error:
        print("make_fixtures: no npz/torch large files: %s" % error, file=sys.stderr)
        return written
    rng = numpy.random.default_rng(7)
    arrays = {f"a{i}": rng.standard_normal((256, 256), dtype=numpy.float32) for i in range(8)}
    numpy.savez(os.path.join(folder, "arrays.npz"), **arrays)
    written.append("arrays.npz")
    state = {k: torch.from_numpy(v) for k, v in arrays.items()}
    torch.save(state, os.path.join(folder, "state.pt"))
    written.append("state.pt")
    # 64 MiB of storage: as a URL it must be judged from its ZIP records, not downloaded.
    torch.save({"big": torch.zeros(BIG_TORCH_BYTES // 4)}, os.path.join(folder, "big_state.pt"))
    written.append("big_state.pt")
    return written


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_big(out)
    write_script_names(out)
    write_lint_model(out)
    write_big_folder(out)
    large = write_large(out)
    write_remote_2g(out)
    write_flipped_state(out)
    print(json.dumps({"script_names": SCRIPT_NAMES, "big_bytes": BIG_BYTES, "large": large}))


if __name__ == "__main__":
    main()
