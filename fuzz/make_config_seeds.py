#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seeds of fuzz_config into corpus/fuzz_config/.

    /usr/bin/python3 fuzz/make_config_seeds.py

Each seed is a config.json, a NUL byte, then a safetensors file (fuzz/fuzz_config.cc): tiny
models of every family, clean and with one rule broken each, plus hostile configs. Data
buffers are zeros. Only the standard library is used.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "corpus", "fuzz_config")
BYTES = {"F32": 4, "F16": 2, "BF16": 2, "U8": 1, "I8": 1}


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape); canonical enough for the reader."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape in tensors:
        size = BYTES[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"\0" * offset


def llama(layers=2, kv=1, extra=(), drop=(), quant=False):
    """vocab 8, hidden 4, 2 heads of 2, `kv` kv heads, mlp 6, untied, F32."""
    t = [("model.embed_tokens.weight", "F32", [8, 4]), ("model.norm.weight", "F32", [4]),
         ("lm_head.weight", "F32", [8, 4])]
    for i in range(layers):
        p = "model.layers.%d." % i
        t += [(p + "self_attn.q_proj.weight", "F32", [4, 4]),
              (p + "self_attn.o_proj.weight", "F32", [4, 4]),
              (p + "mlp.gate_proj.weight", "F32", [6, 4]),
              (p + "mlp.up_proj.weight", "F32", [6, 4]),
              (p + "mlp.down_proj.weight", "F32", [4, 6]),
              (p + "input_layernorm.weight", "F32", [4]),
              (p + "post_attention_layernorm.weight", "F32", [4])]
        if quant and i == 0:
            t += [(p + "self_attn.k_proj.qweight", "U8", [kv * 2, 2]),
                  (p + "self_attn.k_proj.scales", "F16", [kv * 2, 2]),
                  (p + "self_attn.v_proj.weight", "F32", [kv * 2, 4])]
        else:
            t += [(p + "self_attn.k_proj.weight", "F32", [kv * 2, 4]),
                  (p + "self_attn.v_proj.weight", "F32", [kv * 2, 4])]
    t = [x for x in t if x[0] not in drop]
    return t + list(extra)


LLAMA = {"model_type": "llama", "vocab_size": 8, "hidden_size": 4, "num_hidden_layers": 2,
         "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 6,
         "tie_word_embeddings": False, "torch_dtype": "float32"}


def config(base, **changes):
    out = dict(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return json.dumps(out, indent=2).encode()


def gpt2(prefix=""):
    """vocab 6, n_embd 2, 2 layers, 4 positions, n_inner 8 (4 * n_embd), Conv1D [in, out]."""
    t = [(prefix + "wte.weight", "F32", [6, 2]), (prefix + "wpe.weight", "F32", [4, 2]),
         (prefix + "ln_f.weight", "F32", [2]), (prefix + "ln_f.bias", "F32", [2])]
    for i in range(2):
        p = prefix + "h.%d." % i
        t += [(p + "ln_1.weight", "F32", [2]), (p + "ln_1.bias", "F32", [2]),
              (p + "ln_2.weight", "F32", [2]), (p + "ln_2.bias", "F32", [2]),
              (p + "attn.c_attn.weight", "F32", [2, 6]), (p + "attn.c_attn.bias", "F32", [6]),
              (p + "attn.c_proj.weight", "F32", [2, 2]), (p + "attn.c_proj.bias", "F32", [2]),
              (p + "mlp.c_fc.weight", "F32", [2, 8]), (p + "mlp.c_fc.bias", "F32", [8]),
              (p + "mlp.c_proj.weight", "F32", [8, 2]), (p + "mlp.c_proj.bias", "F32", [2])]
    return t


GPT2 = {"model_type": "gpt2", "vocab_size": 6, "n_embd": 2, "n_layer": 2, "n_positions": 4}
PT = {"format": "pt"}

SEEDS = {
    "llama_clean": (config(LLAMA), llama(), PT),
    "llama_mha_k_proj": (config(LLAMA), llama(kv=2), PT),
    "llama_missing_down": (config(LLAMA), llama(drop=("model.layers.1.mlp.down_proj.weight",)), PT),
    "llama_layer_out_of_range": (config(LLAMA), llama(layers=3), PT),
    "llama_tied_with_head": (config(LLAMA, tie_word_embeddings=True), llama(), PT),
    "llama_untied_no_head": (config(LLAMA), llama(drop=("lm_head.weight",)), PT),
    "llama_inv_freq": (config(LLAMA), llama(extra=[("model.layers.0.self_attn.rotary_emb.inv_freq", "F32", [1])]), PT),
    "llama_int4": (config(LLAMA), llama(quant=True), {"format": "pt", "quant": "int4-g2-sym"}),
    "llama_int4_no_quant": (config(LLAMA), llama(quant=True), PT),
    "llama_huge_layers": (config(LLAMA, num_hidden_layers=10**18), llama(), PT),
    "llama_overflow_head_dim": (config(LLAMA, head_dim=2**62), llama(), PT),
    "llama_giant_vocab": (config(LLAMA, vocab_size=2**64 - 1), llama(), PT),
    "llama_wrong_types": (config(LLAMA, hidden_size="16", tie_word_embeddings=0), llama(), PT),
    "llama_missing_field": (config(LLAMA, intermediate_size=None), llama(), None),
    "qwen2_biases": (config(LLAMA, model_type="qwen2"), llama(extra=[("model.layers.0.self_attn.q_proj.bias", "F32", [4])]), PT),
    "qwen3_norms": (config(LLAMA, model_type="qwen3", head_dim=2), llama(extra=[("model.layers.0.self_attn.q_norm.weight", "F32", [2])]), PT),
    "gpt2_clean": (config(GPT2), gpt2(), PT),
    "gpt2_prefixed": (config(GPT2), gpt2("transformer."), PT),
    "gpt2_both_prefixes": (config(GPT2), gpt2() + [("transformer.wte.weight", "F32", [6, 2])], PT),
    "bigram_course": (json.dumps({"tl_arch": "bigram", "vocab_size": 5, "tl_tokenizer": "file"}).encode(),
                      [("bigram.weight", "F32", [5, 5])], {"format": "tinyllm"}),
    "bigram_f16": (json.dumps({"tl_arch": "bigram", "vocab_size": 5}).encode(),
                   [("bigram.weight", "F16", [5, 5])], None),
    "duplicate_key": (b'{"model_type":"llama","vocab_size":8,"vocab_size":9}', llama(), PT),
    "not_object": (b"[1,2]", [], None),
    "invalid_json": (b'{"model_type": "llama",}', [], None),
    "unknown_family": (config(LLAMA, model_type="bert"), llama(), PT),
    "architectures_only": (config(LLAMA, model_type=None, architectures=["LlamaForCausalLM"]), llama(), PT),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (cfg, tensors, metadata) in SEEDS.items():
        data = cfg + b"\0" + safetensors(tensors, metadata)
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    # A config alone (no NUL): the checkpoint is empty.
    with open(os.path.join(OUT, "config_only"), "wb") as f:
        f.write(config(LLAMA))


if __name__ == "__main__":
    main()
