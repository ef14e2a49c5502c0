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
                        has findings
Usage: make_fixtures.py OUT
"""

import json
import os
import struct
import sys

BIG_BYTES = 16 * 1024 ** 3

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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_big(out)
    write_script_names(out)
    write_lint_model(out)
    print(json.dumps({"script_names": SCRIPT_NAMES, "big_bytes": BIG_BYTES}))


if __name__ == "__main__":
    main()
