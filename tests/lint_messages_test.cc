// SPDX-License-Identifier: Apache-2.0
// What lint's findings say: the file a finding is about (the shard, the config the user
// named, the file an invalid checkpoint failed in), shapes as numbers, the formula behind
// an expected shape, and a "did you mean" for a near-miss name.
#include <gtest/gtest.h>

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
using testing::WriteFileBytes;

// A llama of hidden 16, 4 heads (head_dim 4), 2 kv heads, 1 layer, mlp 24, tied.
constexpr char kConfig[] =
    R"({"model_type": "llama", "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 1,)"
    R"( "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 24,)"
    R"( "tie_word_embeddings": true})";

std::vector<ShapedTensor> Embedding() {
  return {{"model.embed_tokens.weight", Dtype::kF32, {32, 16}},
          {"model.norm.weight", Dtype::kF32, {16}}};
}

std::vector<ShapedTensor> Layer0() {
  const std::string p = "model.layers.0.";
  return {{p + "self_attn.q_proj.weight", Dtype::kF32, {16, 16}},
          {p + "self_attn.k_proj.weight", Dtype::kF32, {8, 16}},
          {p + "self_attn.v_proj.weight", Dtype::kF32, {8, 16}},
          {p + "self_attn.o_proj.weight", Dtype::kF32, {16, 16}},
          {p + "mlp.gate_proj.weight", Dtype::kF32, {24, 16}},
          {p + "mlp.up_proj.weight", Dtype::kF32, {24, 16}},
          {p + "mlp.down_proj.weight", Dtype::kF32, {16, 24}},
          {p + "input_layernorm.weight", Dtype::kF32, {16}},
          {p + "post_attention_layernorm.weight", Dtype::kF32, {16}}};
}

ShapedTensor* Find(std::vector<ShapedTensor>& tensors, const std::string& name) {
  for (ShapedTensor& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

const LintFinding* First(const LintReport& report, const std::string& rule) {
  for (const LintFinding& finding : report.findings) {
    if (finding.rule == rule) return &finding;
  }
  return nullptr;
}

// WriteSharded writes two shards and their index: the embedding in one, layer 0 in two.
void WriteSharded(const TempDir& dir, const std::vector<ShapedTensor>& layer) {
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("a.safetensors"), Embedding(),
                                             {{"format", "pt"}}).ok());
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("b.safetensors"), layer,
                                             {{"format", "pt"}}).ok());
  std::string map;
  for (const ShapedTensor& t : Embedding()) map += "\"" + t.name + "\": \"a.safetensors\",";
  for (const ShapedTensor& t : layer) map += "\"" + t.name + "\": \"b.safetensors\",";
  map.pop_back();
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             "{\"metadata\": {}, \"weight_map\": {" + map + "}}"));
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), kConfig));
}

TEST(LintMessagesTest, AShardedFindingNamesItsShard) {
  TempDir dir;
  WriteSharded(dir, Layer0());
  EXPECT_TRUE(LintModel(dir.path()).ok());  // accept: the clean model has no finding
  std::vector<ShapedTensor> layer = Layer0();
  Find(layer, "model.layers.0.self_attn.k_proj.weight")->shape = {16, 16};
  WriteSharded(dir, layer);
  const LintReport report = LintModel(dir.path());
  const LintFinding* wrong = First(report, "wrong-shape");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->file, "b.safetensors");
}

TEST(LintMessagesTest, ExpectedShapeIsNumbersAndShowsItsFormula) {
  TempDir dir;
  std::vector<ShapedTensor> tensors = Embedding();
  for (const ShapedTensor& t : Layer0()) tensors.push_back(t);
  Find(tensors, "model.layers.0.self_attn.k_proj.weight")->shape = {16, 16};
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("model.safetensors"), tensors,
                                             {{"format", "pt"}}).ok());
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), kConfig));
  const LintReport report = LintModel(dir.path());
  const LintFinding* wrong = First(report, "wrong-shape");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->expected_shape, (std::vector<uint64_t>{8, 16}));
  EXPECT_EQ(wrong->found_shape, (std::vector<uint64_t>{16, 16}));
  EXPECT_NE(wrong->message.find("num_key_value_heads*head_dim = 2*4, hidden_size = 16"),
            std::string::npos) << wrong->message;
  EXPECT_EQ(wrong->file, "");  // one file: no shard to name
  // Not a shape: no numbers.
  const LintFinding* clean_dtype = First(report, "wrong-dtype");
  EXPECT_EQ(clean_dtype, nullptr);
}

TEST(LintMessagesTest, ANearMissNameGetsADidYouMean) {
  TempDir dir;
  std::vector<ShapedTensor> tensors = Embedding();
  for (const ShapedTensor& t : Layer0()) tensors.push_back(t);
  tensors.push_back({"model.layers.0.self_attn.q_proj.weigth", Dtype::kF32, {16, 16}});
  tensors.push_back({"model.layers.0.rotary_emb.inv_freq", Dtype::kF32, {2}});
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("model.safetensors"), tensors,
                                             {{"format", "pt"}}).ok());
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), kConfig));
  const LintReport report = LintModel(dir.path());
  int near = 0;
  int far = 0;
  for (const LintFinding& finding : report.findings) {
    if (finding.rule != "unknown-tensor") continue;
    if (finding.tensor == "model.layers.0.self_attn.q_proj.weigth") {
      ++near;
      EXPECT_NE(finding.message.find("did you mean model.layers.{i}.self_attn.q_proj.weight?"),
                std::string::npos) << finding.message;
    } else {
      ++far;  // nothing in the table is within two edits: no suggestion
      EXPECT_EQ(finding.message.find("did you mean"), std::string::npos) << finding.message;
    }
  }
  EXPECT_EQ(near, 1);
  EXPECT_EQ(far, 1);
}

// Names past the compared length get no suggestion, however near: the cost stays bounded.
TEST(LintMessagesTest, AVeryLongNameGetsNoSuggestion) {
  TempDir dir;
  std::vector<ShapedTensor> tensors = Embedding();
  for (const ShapedTensor& t : Layer0()) tensors.push_back(t);
  const std::string long_name = "model.norm.weigh" + std::string(300, 't');
  tensors.push_back({long_name, Dtype::kF32, {16}});
  tensors.push_back({"model.norm.weigt", Dtype::kF32, {16}});
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("model.safetensors"), tensors,
                                             {{"format", "pt"}}).ok());
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), kConfig));
  const LintReport report = LintModel(dir.path());
  int checked = 0;
  for (const LintFinding& finding : report.findings) {
    if (finding.tensor == long_name) {
      ++checked;
      EXPECT_EQ(finding.message.find("did you mean"), std::string::npos) << finding.message;
    } else if (finding.tensor == "model.norm.weigt") {
      ++checked;
      EXPECT_NE(finding.message.find("did you mean model.norm.weight?"), std::string::npos)
          << finding.message;
    }
  }
  EXPECT_EQ(checked, 2);
}

TEST(LintMessagesTest, ANamedConfigIsNamedInFindings) {
  TempDir dir;
  std::vector<ShapedTensor> tensors = Embedding();
  for (const ShapedTensor& t : Layer0()) tensors.push_back(t);
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("model.safetensors"), tensors,
                                             {{"format", "pt"}}).ok());
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "{\"model_type\": 7}"));
  ASSERT_TRUE(WriteFileBytes(dir.File("other.json"), "{\"model_type\": 7}"));
  LintOptions options;
  const LintReport beside = LintModel(dir.path(), options);
  ASSERT_FALSE(beside.findings.empty());
  EXPECT_EQ(beside.findings[0].file, "config.json");
  options.config_path = dir.File("other.json");
  const LintReport named = LintModel(dir.path(), options);
  ASSERT_FALSE(named.findings.empty());
  for (const LintFinding& finding : named.findings) {
    EXPECT_NE(finding.file, "config.json") << finding.rule;
  }
  EXPECT_EQ(named.findings[0].file, dir.File("other.json"));
}

TEST(LintMessagesTest, AnInvalidShardIsTheFindingsFileNotItsErrorText) {
  TempDir dir;
  WriteSharded(dir, Layer0());
  ASSERT_TRUE(WriteFileBytes(dir.File("b.safetensors"), "this is text, not a checkpoint"));
  const LintReport report = LintModel(dir.path());
  const LintFinding* invalid = First(report, "invalid-checkpoint");
  ASSERT_NE(invalid, nullptr);
  EXPECT_EQ(invalid->file, "b.safetensors");
  EXPECT_NE(invalid->message.find("HeaderTooLarge"), std::string::npos) << invalid->message;
}

}  // namespace
}  // namespace stguard
