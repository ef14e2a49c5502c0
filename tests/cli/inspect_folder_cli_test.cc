// SPDX-License-Identifier: Apache-2.0
// inspect works on every input check accepts: a folder (text and --json), an index file
// (inspected as its folder, and says so), sharded safetensors, PyTorch and GGUF split
// folders; a file whose bytes are not what its name suggests says what it is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "support/gguf_encoder.h"
#include "support/gguf_fixtures.h"
#include "support/run_cli.h"
#include "support/sharded_folder.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::CliRun;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

const std::string kTorchSharded = std::string(STGUARD_CORPUS_DIR) + "/torch/valid/sharded";

bool Has(const CliRun& run, const std::string& text) {
  return run.output.find(text) != std::string::npos;
}

TEST(InspectFolderCliTest, ShardedSafetensorsFolderTextJsonAndIndex) {
  TempDir dir;
  testing::WriteShardedFolder(dir, 3);
  const CliRun text = RunCli("inspect " + ShellQuoted(dir.path()));
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(Has(text, "folder: " + dir.path())) << text.output;
  EXPECT_TRUE(Has(text, "file: model-00002-of-00003.safetensors (safetensors, 3 tensors)"))
      << text.output;
  EXPECT_TRUE(Has(text, "totals: 9 tensors in 3 files")) << text.output;
  EXPECT_FALSE(Has(text, "note:")) << text.output;  // a folder given as one: nothing to say

  const CliRun json = RunCli("inspect --json " + ShellQuoted(dir.path()));
  EXPECT_EQ(json.status, 0) << json.output;
  EXPECT_TRUE(Has(json, "\"format\":\"folder\"")) << json.output;
  EXPECT_FALSE(Has(json, "\"format\":\"unknown\"")) << json.output;
  EXPECT_TRUE(Has(json, "\"name\":\"model-00001-of-00003.safetensors\",\"format\":"
                        "\"safetensors\",\"tensors\":[{\"name\":"))
      << json.output;
  EXPECT_TRUE(Has(json, "\"totals\":{\"files\":3,\"tensors\":9,")) << json.output;

  const CliRun index = RunCli("inspect " + ShellQuoted(dir.File("model.safetensors.index.json")));
  EXPECT_EQ(index.status, 0) << index.output;
  EXPECT_TRUE(Has(index, "note: an index file: inspected as its folder " + dir.path()))
      << index.output;
  EXPECT_TRUE(Has(index, "totals: 9 tensors in 3 files")) << index.output;
  const CliRun index_json =
      RunCli("inspect --json " + ShellQuoted(dir.File("model.safetensors.index.json")));
  EXPECT_TRUE(Has(index_json, "\"note\":\"an index file: inspected as its folder"))
      << index_json.output;
}

TEST(InspectFolderCliTest, PytorchShardedFolderAndItsIndex) {
  for (const std::string& path : std::initializer_list<std::string>{
           kTorchSharded, kTorchSharded + "/pytorch_model.bin.index.json"}) {
    const CliRun text = RunCli("inspect " + ShellQuoted(path));
    EXPECT_EQ(text.status, 0) << path << ": " << text.output;
    EXPECT_TRUE(Has(text, "file: pytorch_model-00001-of-00002.bin (pytorch-zip, ")) << text.output;
    EXPECT_TRUE(Has(text, "file: pytorch_model-00002-of-00002.bin (pytorch-zip, ")) << text.output;
    const CliRun json = RunCli("inspect --json " + ShellQuoted(path));
    EXPECT_EQ(json.status, 0) << json.output;
    EXPECT_TRUE(Has(json, "\"name\":\"pytorch_model-00001-of-00002.bin\",\"format\":"
                          "\"pytorch-zip\",\"tensors\":[{"))
        << json.output;
  }
}

// check of a PyTorch index checks its folder: its shards are never read as safetensors
// (which gave a header length read from a ZIP, and another file's verdict as the index's).
TEST(InspectFolderCliTest, CheckOfAPytorchIndexChecksItsFolder) {
  const CliRun run =
      RunCli("check --json " + ShellQuoted(kTorchSharded + "/pytorch_model.bin.index.json"));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Has(run, "\"verdict\":\"valid\"")) << run.output;
  EXPECT_FALSE(Has(run, "HeaderTooLarge")) << run.output;
}

TEST(InspectFolderCliTest, GgufSplitFolder) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("m-00001-of-00002.gguf"),
                             testing::Encode(testing::SplitPart(0, 2, 3, {"a", "b"}))));
  ASSERT_TRUE(WriteFileBytes(dir.File("m-00002-of-00002.gguf"),
                             testing::Encode(testing::SplitPart(1, 2, 3, {"c"}))));
  const CliRun text = RunCli("inspect " + ShellQuoted(dir.path()));
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(Has(text, "file: m-00001-of-00002.gguf (gguf, 2 tensors)")) << text.output;
  EXPECT_TRUE(Has(text, "file: m-00002-of-00002.gguf (gguf, 1 tensor)")) << text.output;
  EXPECT_TRUE(Has(text, "totals: 3 tensors in 2 files")) << text.output;
  const CliRun json = RunCli("inspect --json " + ShellQuoted(dir.path()));
  EXPECT_EQ(json.status, 0) << json.output;
  EXPECT_TRUE(Has(json, "\"format\":\"gguf\",\"tensors\":[{\"name\":\"a\"")) << json.output;
}

TEST(InspectFolderCliTest, LinksOutOfTheFolderNeedTheFlag) {
  TempDir outside;
  testing::WriteShard(outside, "model.safetensors", {testing::ShardTensor("w")});
  TempDir dir;
  ASSERT_EQ(symlink(outside.File("model.safetensors").c_str(),
                    dir.File("model.safetensors").c_str()),
            0);
  CliRun run = RunCli("inspect " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(Has(run, "--allow-external-symlinks")) << run.output;
  run = RunCli("inspect --allow-external-symlinks " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Has(run, "totals: 1 tensor in 1 file")) << run.output;
  // On a file the flag means nothing: a usage error.
  run = RunCli("inspect --allow-external-symlinks " +
               ShellQuoted(outside.File("model.safetensors")));
  EXPECT_EQ(run.status, 2) << run.output;
}

TEST(InspectFolderCliTest, AnInvalidFolderIsReportedAsCheckReportsIt) {
  TempDir dir;
  testing::WriteShardedFolder(dir, 2);
  ASSERT_TRUE(WriteFileBytes(dir.File("model-00002-of-00002.safetensors"), "broken"));
  const CliRun run = RunCli("inspect " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_FALSE(Has(run, "totals:")) << run.output;
}

TEST(InspectFolderCliTest, AnInvalidIndexSaysInJsonWhatWasInspected) {
  TempDir dir;
  testing::WriteShardedFolder(dir, 2);
  ASSERT_TRUE(WriteFileBytes(dir.File("model-00002-of-00002.safetensors"), "broken"));
  const std::string index = dir.File("model.safetensors.index.json");
  CliRun run = RunCli("inspect --json " + ShellQuoted(index));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_TRUE(Has(run, "\"verdict\":\"invalid\"")) << run.output;
  EXPECT_TRUE(Has(run, "\"member\":\"model-00002-of-00002.safetensors\"")) << run.output;
  EXPECT_TRUE(Has(run, "\"note\":\"an index file: inspected as its folder ")) << run.output;
  // The folder given as itself: nothing to note.
  run = RunCli("inspect --json " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_FALSE(Has(run, "\"note\"")) << run.output;
}

TEST(InspectFolderCliTest, AnInputTheCommandDoesNotReadIsAnEnvelopeInJson) {
  const std::string torch = kTorchSharded + "/pytorch_model-00001-of-00002.bin";
  const std::vector<std::string> commands = {"inspect --stats --json ", "lint --json "};
  for (const std::string& command : commands) {
    const CliRun run = RunCli(command + ShellQuoted(torch));
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_TRUE(Has(run, "{\"schema_version\":2,")) << command << run.output;
    EXPECT_TRUE(Has(run, "\"format\":\"pytorch-zip\",\"verdict\":\"error\","
                         "\"code\":\"InvalidArgument\"")) << command << run.output;
    // inspect reads one input: its usage on stderr. lint judges many inputs, so the input
    // it does not read is that input's result, and the other inputs are still judged.
    if (command.starts_with("inspect")) {
      EXPECT_TRUE(Has(run, "usage: stguard ")) << command << run.output;  // on stderr
    }
  }
  // Without --json, the usage alone.
  const CliRun text = RunCli("inspect --stats " + ShellQuoted(torch));
  EXPECT_EQ(text.status, 2) << text.output;
  EXPECT_FALSE(Has(text, "schema_version")) << text.output;
}

TEST(InspectFolderCliTest, AFileSaysWhatItIsWhenItsNameSaysOtherwise) {
  TempDir dir;
  testing::WriteShardedFolder(dir, 2);
  // A shard index under a checkpoint's name: no absurd header length, but what it is.
  ASSERT_TRUE(WriteFileBytes(dir.File("index.safetensors"),
                             ReadFileBytes(dir.File("model.safetensors.index.json"))));
  CliRun run = RunCli("inspect " + ShellQuoted(dir.File("index.safetensors")));
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(Has(run, "this is a shard index")) << run.output;
  EXPECT_FALSE(Has(run, "HeaderTooLarge")) << run.output;
  // Other JSON text says so too; a real checkpoint gets no such sentence.
  ASSERT_TRUE(WriteFileBytes(dir.File("config.safetensors"), R"({"model_type":"x"})"));
  run = RunCli("inspect " + ShellQuoted(dir.File("config.safetensors")));
  EXPECT_TRUE(Has(run, "this is JSON text, not a checkpoint")) << run.output;
  run = RunCli("inspect " + ShellQuoted(dir.File("model-00001-of-00002.safetensors")));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_FALSE(Has(run, "this is")) << run.output;

  // A PyTorch checkpoint named .safetensors is described as what it is, and says so.
  ASSERT_TRUE(WriteFileBytes(dir.File("torch.safetensors"),
                             ReadFileBytes(kTorchSharded + "/pytorch_model-00001-of-00002.bin")));
  run = RunCli("inspect " + ShellQuoted(dir.File("torch.safetensors")));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Has(run, "this is a PyTorch checkpoint, named like a safetensors file"))
      << run.output;
  // --stats reads safetensors data: on a PyTorch checkpoint it is refused by what the
  // bytes are, never a header length read from a ZIP.
  for (const std::string& path : std::initializer_list<std::string>{
           kTorchSharded + "/pytorch_model-00001-of-00002.bin", dir.File("torch.safetensors")}) {
    run = RunCli("inspect --stats " + ShellQuoted(path));
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_TRUE(Has(run, "--stats applies to safetensors, folder, not to PyTorch")) << run.output;
    EXPECT_FALSE(Has(run, "HeaderTooLarge")) << run.output;
  }
}

}  // namespace
}  // namespace stguard
