// SPDX-License-Identifier: Apache-2.0
// `stguard lint` as a person and a program read it: the file a finding is in (the shard,
// the config named with --config, the file an invalid checkpoint failed in) where the file
// name belongs, and shapes in --json as arrays of numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stguard/json_tokenizer.h"
#include "support/run_cli.h"
#include "support/sparse_checkpoint.h"
#include "support/temp_dir.h"

namespace stguard {
namespace {

using testing::CliRun;
using testing::RunCli;
using testing::ShapedTensor;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

constexpr char kConfig[] =
    R"({"model_type": "llama", "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 1,)"
    R"( "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 24,)"
    R"( "tie_word_embeddings": true})";

// Shards writes a two-shard llama (embedding in a, layer 0 in b) with k_proj's first dim
// `k_rows` (8 is right), its index and config.json.
void Shards(const TempDir& dir, uint64_t k_rows) {
  const std::vector<ShapedTensor> a = {{"model.embed_tokens.weight", Dtype::kF32, {32, 16}},
                                       {"model.norm.weight", Dtype::kF32, {16}}};
  const std::string p = "model.layers.0.";
  const std::vector<ShapedTensor> b = {
      {p + "self_attn.q_proj.weight", Dtype::kF32, {16, 16}},
      {p + "self_attn.k_proj.weight", Dtype::kF32, {k_rows, 16}},
      {p + "self_attn.v_proj.weight", Dtype::kF32, {8, 16}},
      {p + "self_attn.o_proj.weight", Dtype::kF32, {16, 16}},
      {p + "mlp.gate_proj.weight", Dtype::kF32, {24, 16}},
      {p + "mlp.up_proj.weight", Dtype::kF32, {24, 16}},
      {p + "mlp.down_proj.weight", Dtype::kF32, {16, 24}},
      {p + "input_layernorm.weight", Dtype::kF32, {16}},
      {p + "post_attention_layernorm.weight", Dtype::kF32, {16}}};
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("a.safetensors"), a, {{"format", "pt"}}).ok());
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir.File("b.safetensors"), b, {{"format", "pt"}}).ok());
  std::string map;
  for (const ShapedTensor& t : a) map += "\"" + t.name + "\": \"a.safetensors\",";
  for (const ShapedTensor& t : b) map += "\"" + t.name + "\": \"b.safetensors\",";
  map.pop_back();
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             "{\"metadata\": {}, \"weight_map\": {" + map + "}}"));
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), kConfig));
}

TEST(CliLintTest, JsonShapesAreArraysAndFindingsNameTheirShard) {
  TempDir dir;
  Shards(dir, 8);
  CliRun run = RunCli("lint --json " + ShellQuoted(dir.path()), testing::Streams::kStdoutOnly);
  EXPECT_EQ(run.status, 0) << run.output;  // accept: the right shape has no finding
  Shards(dir, 16);
  run = RunCli("lint --json " + ShellQuoted(dir.path()), testing::Streams::kStdoutOnly);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(ValidateJson(run.output).ok()) << run.output;
  EXPECT_NE(run.output.find("\"file\":\"b.safetensors\""), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"expected\":[8,16],\"found\":[16,16]"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("num_key_value_heads*head_dim = 2*4"), std::string::npos)
      << run.output;
  run = RunCli("lint " + ShellQuoted(dir.path()));
  EXPECT_NE(run.output.find("wrong-shape: file 'b.safetensors' tensor "
                            "'model.layers.0.self_attn.k_proj.weight' expected [8, 16], "
                            "found [16, 16]"),
            std::string::npos) << run.output;
}

TEST(CliLintTest, TheFileOfAnInvalidShardIsItsName) {
  TempDir dir;
  Shards(dir, 8);
  ASSERT_TRUE(WriteFileBytes(dir.File("b.safetensors"), "this is text, not a checkpoint"));
  CliRun run = RunCli("lint " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 1) << run.output;
  // lint runs check first: the folder's verdict names the shard in its message, and the
  // file field stays the folder's path (never the error's context).
  EXPECT_NE(run.output.find("invalid: HeaderTooLarge"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("shard 'b.safetensors'"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("file 'shard"), std::string::npos) << run.output;
  run = RunCli("lint --json " + ShellQuoted(dir.path()), testing::Streams::kStdoutOnly);
  EXPECT_NE(run.output.find("\"file\":\"" + dir.path() + "\""), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("\"file\":\"shard"), std::string::npos) << run.output;
}

TEST(CliLintTest, AConfigNamedWithConfigIsNamedInFindings) {
  TempDir dir;
  Shards(dir, 8);
  const std::string other = dir.File("other.json");
  ASSERT_TRUE(WriteFileBytes(other, "{\"model_type\": 7}"));
  CliRun run = RunCli("lint --config " + ShellQuoted(other) + " " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("file '" + other + "'"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("file 'config.json'"), std::string::npos) << run.output;
  // Accept: without --config, the config beside the weights is config.json.
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "{\"model_type\": 7}"));
  run = RunCli("lint " + ShellQuoted(dir.path()));
  EXPECT_NE(run.output.find("file 'config.json'"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace stguard
