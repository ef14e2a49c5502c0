// SPDX-License-Identifier: Apache-2.0
// stguard lint on four real models: the config.json of GPT-2 small, Llama-3-8B,
// Qwen2.5-0.5B and SmolLM2-135M (copied into tests/lint_configs/), each beside a
// header-only checkpoint with the exact tensor names, dtypes and shapes of the published
// files (written out here with literal numbers, independent of the lint tables; data is a
// sparse hole). Each lints clean, and one wrong shape in each is caught.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "stguard/lint.h"
#include "support/sparse_checkpoint.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ShapedTensor;
using testing::TempDir;

std::string Layer(const std::string& prefix, int i, const std::string& rest) {
  return prefix + std::to_string(i) + "." + rest;
}

// Gpt2Small: the hub's model.safetensors (F32, no prefix, with the attn.bias masks).
std::vector<ShapedTensor> Gpt2Small() {
  std::vector<ShapedTensor> t = {{"wte.weight", Dtype::kF32, {50257, 768}},
                                 {"wpe.weight", Dtype::kF32, {1024, 768}},
                                 {"ln_f.weight", Dtype::kF32, {768}},
                                 {"ln_f.bias", Dtype::kF32, {768}}};
  for (int i = 0; i < 12; ++i) {
    t.push_back({Layer("h.", i, "ln_1.weight"), Dtype::kF32, {768}});
    t.push_back({Layer("h.", i, "ln_1.bias"), Dtype::kF32, {768}});
    t.push_back({Layer("h.", i, "attn.bias"), Dtype::kF32, {1, 1, 1024, 1024}});
    t.push_back({Layer("h.", i, "attn.c_attn.weight"), Dtype::kF32, {768, 2304}});
    t.push_back({Layer("h.", i, "attn.c_attn.bias"), Dtype::kF32, {2304}});
    t.push_back({Layer("h.", i, "attn.c_proj.weight"), Dtype::kF32, {768, 768}});
    t.push_back({Layer("h.", i, "attn.c_proj.bias"), Dtype::kF32, {768}});
    t.push_back({Layer("h.", i, "ln_2.weight"), Dtype::kF32, {768}});
    t.push_back({Layer("h.", i, "ln_2.bias"), Dtype::kF32, {768}});
    t.push_back({Layer("h.", i, "mlp.c_fc.weight"), Dtype::kF32, {768, 3072}});
    t.push_back({Layer("h.", i, "mlp.c_fc.bias"), Dtype::kF32, {3072}});
    t.push_back({Layer("h.", i, "mlp.c_proj.weight"), Dtype::kF32, {3072, 768}});
    t.push_back({Layer("h.", i, "mlp.c_proj.bias"), Dtype::kF32, {768}});
  }
  return t;
}

// LlamaLike: the Llama layout with literal sizes (q_out = heads * head_dim, kv_out =
// kv_heads * head_dim), BF16, q/k/v biases when `qkv_bias` (Qwen2).
std::vector<ShapedTensor> LlamaLike(uint64_t vocab, uint64_t hidden, uint64_t q_out,
                                    uint64_t kv_out, uint64_t mlp, int layers, bool lm_head,
                                    bool qkv_bias) {
  const Dtype bf16 = Dtype::kBF16;
  std::vector<ShapedTensor> t = {{"model.embed_tokens.weight", bf16, {vocab, hidden}},
                                 {"model.norm.weight", bf16, {hidden}}};
  if (lm_head) t.push_back({"lm_head.weight", bf16, {vocab, hidden}});
  const std::string p = "model.layers.";
  for (int i = 0; i < layers; ++i) {
    t.push_back({Layer(p, i, "input_layernorm.weight"), bf16, {hidden}});
    t.push_back({Layer(p, i, "post_attention_layernorm.weight"), bf16, {hidden}});
    t.push_back({Layer(p, i, "self_attn.q_proj.weight"), bf16, {q_out, hidden}});
    t.push_back({Layer(p, i, "self_attn.k_proj.weight"), bf16, {kv_out, hidden}});
    t.push_back({Layer(p, i, "self_attn.v_proj.weight"), bf16, {kv_out, hidden}});
    t.push_back({Layer(p, i, "self_attn.o_proj.weight"), bf16, {hidden, q_out}});
    if (qkv_bias) {
      t.push_back({Layer(p, i, "self_attn.q_proj.bias"), bf16, {q_out}});
      t.push_back({Layer(p, i, "self_attn.k_proj.bias"), bf16, {kv_out}});
      t.push_back({Layer(p, i, "self_attn.v_proj.bias"), bf16, {kv_out}});
    }
    t.push_back({Layer(p, i, "mlp.gate_proj.weight"), bf16, {mlp, hidden}});
    t.push_back({Layer(p, i, "mlp.up_proj.weight"), bf16, {mlp, hidden}});
    t.push_back({Layer(p, i, "mlp.down_proj.weight"), bf16, {hidden, mlp}});
  }
  return t;
}

std::string IndexEntryJson(const std::string& tensor, const std::string& shard) {
  return "\"" + tensor + "\": \"" + shard + "\"";
}

class RealModelTest : public ::testing::Test {
 protected:
  // WriteFolder writes config.json and the tensors, in `num_shards` shards with an index
  // when num_shards > 1, metadata {"format": "pt"} as transformers writes it.
  void WriteFolder(const std::string& config_name, const std::vector<ShapedTensor>& tensors,
                   int num_shards = 1) {
    const std::string config =
        testing::ReadFileBytes(std::string(STGUARD_LINT_CONFIGS_DIR) + "/" + config_name);
    ASSERT_TRUE(testing::WriteFileBytes(dir_.File("config.json"), config));
    if (num_shards == 1) {
      ASSERT_TRUE(testing::WriteSparseCheckpoint(dir_.File("model.safetensors"), tensors,
                                                 {{"format", "pt"}})
                      .ok());
      return;
    }
    std::string index = "{\"metadata\": {}, \"weight_map\": {";
    for (int s = 0; s < num_shards; ++s) {
      char name[64];
      std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", s + 1, num_shards);
      std::vector<ShapedTensor> part;
      for (size_t i = static_cast<size_t>(s); i < tensors.size(); i += static_cast<size_t>(num_shards)) {
        part.push_back(tensors[i]);
        if (index.back() != '{') index += ", ";
        index += IndexEntryJson(tensors[i].name, name);
      }
      ASSERT_TRUE(testing::WriteSparseCheckpoint(dir_.File(name), part, {{"format", "pt"}}).ok());
    }
    ASSERT_TRUE(testing::WriteFileBytes(dir_.File("model.safetensors.index.json"), index + "}}"));
  }

  static std::string Describe(const LintReport& report) {
    std::string out = report.error.ToString() + "\n";
    for (const LintFinding& f : report.findings) {
      out += f.rule + " '" + f.tensor + "' " + f.expected + " / " + f.found + ": " + f.message + "\n";
    }
    return out;
  }

  // ExpectCleanThenCaught lints clean, then with one shape changed finds exactly that.
  void ExpectCleanThenCaught(const std::string& config_name, std::vector<ShapedTensor> tensors,
                             const std::string& family, size_t num_tensors, int num_shards,
                             const std::string& broken, std::vector<uint64_t> broken_shape,
                             const std::string& expected) {
    WriteFolder(config_name, tensors, num_shards);
    LintReport report = LintModel(dir_.path());
    EXPECT_TRUE(report.error.ok() && report.findings.empty()) << Describe(report);
    EXPECT_EQ(report.family, family);
    EXPECT_EQ(report.num_tensors, num_tensors);
    EXPECT_EQ(report.num_shards, static_cast<size_t>(num_shards));
    for (ShapedTensor& tensor : tensors) {
      if (tensor.name == broken) tensor.shape = broken_shape;
    }
    WriteFolder(config_name, tensors, num_shards);
    report = LintModel(dir_.path());
    ASSERT_EQ(report.findings.size(), 1u) << Describe(report);
    EXPECT_EQ(report.findings[0].rule, "wrong-shape");
    EXPECT_EQ(report.findings[0].tensor, broken);
    EXPECT_EQ(report.findings[0].expected, expected);
  }

  TempDir dir_;
};

TEST_F(RealModelTest, Gpt2Small) {
  // 4 + 12 * 13 = 160 tensors; c_fc stored [out, in] (nn.Linear) instead of Conv1D's [in, out].
  ExpectCleanThenCaught("gpt2.json", Gpt2Small(), "gpt2", 160, 1, "h.5.mlp.c_fc.weight",
                        {3072, 768}, "[768, 3072]");
}

TEST_F(RealModelTest, Llama3_8B) {
  // 3 + 32 * 9 = 291 tensors in four shards, as published; k_proj sized for full MHA.
  ExpectCleanThenCaught("llama3_8b.json",
                        LlamaLike(128256, 4096, 4096, 1024, 14336, 32, true, false), "llama", 291,
                        4, "model.layers.17.self_attn.k_proj.weight", {4096, 4096}, "[1024, 4096]");
}

TEST_F(RealModelTest, Qwen2_5_0_5B) {
  // Tied: no lm_head; 2 + 24 * 12 = 290 tensors; head_dim 64, 2 kv heads.
  ExpectCleanThenCaught("qwen2_5_0_5b.json",
                        LlamaLike(151936, 896, 896, 128, 4864, 24, false, true), "qwen2", 290, 1,
                        "model.layers.3.self_attn.v_proj.bias", {896}, "[128]");
}

TEST_F(RealModelTest, SmolLM2_135M) {
  // Tied: 2 + 30 * 9 = 272 tensors; 9 heads of 64, 3 kv heads; embedding one row too many.
  ExpectCleanThenCaught("smollm2_135m.json", LlamaLike(49152, 576, 576, 192, 1536, 30, false, false),
                        "llama", 272, 1, "model.embed_tokens.weight", {49153, 576}, "[49152, 576]");
}

}  // namespace
}  // namespace stguard
