// SPDX-License-Identifier: Apache-2.0
// `stguard check` on the command line: a sharded folder (exit status and messages for each
// broken rule), a split GGUF model checked as one set from its first part, and --aligned.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "support/gguf_fixtures.h"
#include "support/run_cli.h"
#include "support/sharded_folder.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

TEST(CheckDirCliTest, ExitCodesAndMessages) {
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, 3);
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), R"({"tie_word_embeddings": true})"));
  CliRun result = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("valid: 9 tensors in 3 shards"), std::string::npos) << result.output;
  result = RunCli("check " + ShellQuoted(dir.File("model.safetensors.index.json")));
  EXPECT_EQ(result.status, 0) << result.output;

  ASSERT_TRUE(WriteFileBytes(dir.File("pytorch_model.bin"), "x"));
  result = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("warning: pickle-file"), std::string::npos) << result.output;
  result = RunCli("check --json " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find(R"("ok":true)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(R"("kind":"pickle-file")"), std::string::npos) << result.output;

  ASSERT_EQ(::unlink(dir.File(ShardName(3, 3)).c_str()), 0);
  result = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("MissingShard"), std::string::npos) << result.output;

  std::vector<std::pair<std::string, std::string>> entries = folder.entries;
  entries[0].second = "../../etc/passwd";
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), IndexJson(entries)));
  result = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("UnsafeShardName"), std::string::npos) << result.output;

  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "{"));
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), IndexJson(folder.entries)));
  WriteShardedFolder(dir, 3);
  result = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("InvalidConfig"), std::string::npos) << result.output;

  EXPECT_EQ(RunCli("check " + ShellQuoted(dir.File("nope"))).status, 2);
  EXPECT_EQ(RunCli("check --bogus " + ShellQuoted(dir.path())).status, 2);
}

TEST_F(GgufSplit, CheckOnTheFirstPartChecksTheSet) {
  WriteValidSet();
  CliRun run = RunCli("check " + ShellQuoted(PartPath(1)));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("3 parts, 5 tensors"), std::string::npos) << run.output;
  std::remove(PartPath(2).c_str());
  run = RunCli("check " + ShellQuoted(PartPath(1)));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("MissingShard"), std::string::npos) << run.output;
}

TEST(AlignmentCliTest, CheckAlignedAcceptsAlignedAndRejectsMisalignedFiles) {
  TempDir dir;
  const std::string aligned = ShellQuoted(dir.File("aligned.safetensors"));
  const std::string misaligned = ShellQuoted(dir.File("misaligned.safetensors"));
  ASSERT_TRUE(WriteFileBytes(dir.File("aligned.safetensors"),
                             FileWithHeader(kAlignedHeader, std::string(6, '\0'))));
  ASSERT_TRUE(WriteFileBytes(dir.File("misaligned.safetensors"),
                             FileWithHeader(kMisalignedHeader, std::string(6, '\0'))));
  CliRun run = RunCli("check --aligned " + aligned);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find(": valid: safetensors, 2 tensors"), std::string::npos) << run.output;
  run = RunCli("check --aligned " + misaligned);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("invalid: MisalignedData at byte"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("(tensor 'w')"), std::string::npos) << run.output;
  run = RunCli("check " + misaligned);
  EXPECT_EQ(run.status, 0) << run.output;  // valid without --aligned
  run = RunCli("check --aligned --json " + misaligned);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("\"MisalignedData\""), std::string::npos) << run.output;
  run = RunCli("check --aligned " + ShellQuoted(std::string(STGUARD_CORPUS_DIR) +
                                                "/sample.safetensors"));
  EXPECT_EQ(run.status, 0) << run.output;
}

}  // namespace
}  // namespace stguard::testing
