// SPDX-License-Identifier: Apache-2.0
#include "support/lint_models.h"

namespace stguard::testing {

Model TinyLlama(Dtype dtype) {
  Model model;
  model.config =
      R"({"model_type": "llama", "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 2,)"
      R"( "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 24,)"
      R"( "tie_word_embeddings": false, "torch_dtype": "float32", "rms_norm_eps": 1e-05})";
  model.tensors = {{"model.embed_tokens.weight", dtype, {32, 16}},
                   {"model.norm.weight", dtype, {16}},
                   {"lm_head.weight", dtype, {32, 16}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    model.tensors.push_back({p + "self_attn.q_proj.weight", dtype, {16, 16}});
    model.tensors.push_back({p + "self_attn.k_proj.weight", dtype, {8, 16}});
    model.tensors.push_back({p + "self_attn.v_proj.weight", dtype, {8, 16}});
    model.tensors.push_back({p + "self_attn.o_proj.weight", dtype, {16, 16}});
    model.tensors.push_back({p + "mlp.gate_proj.weight", dtype, {24, 16}});
    model.tensors.push_back({p + "mlp.up_proj.weight", dtype, {24, 16}});
    model.tensors.push_back({p + "mlp.down_proj.weight", dtype, {16, 24}});
    model.tensors.push_back({p + "input_layernorm.weight", dtype, {16}});
    model.tensors.push_back({p + "post_attention_layernorm.weight", dtype, {16}});
  }
  return model;
}

}  // namespace stguard::testing
