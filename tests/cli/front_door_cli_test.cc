// SPDX-License-Identifier: Apache-2.0
// The front door through the command line: the same folder gives the same verdict through
// check, lint and inspect --stats; every format is recognised by content; exit statuses
// follow the verdict (0 valid, 1 invalid or refused, 2 error).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::RunCli;
using testing::ShellQuoted;
using testing::Streams;
using testing::TempDir;
using testing::WriteFileBytes;

const std::string kCorpus = std::string(STGUARD_CORPUS_DIR) + "/";
const std::string kEvilPickle = kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt";

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// NpyBytes is a .npy of two float32 zeros.
std::string NpyBytes() { return testing::NpyFileBytes("<f4", "(2,)", std::string(8, '\0')); }

// GgufBytes is a GGUF v3 file with one F32 tensor "t" of 2 elements and no key.
std::string GgufBytes() {
  std::string out = "GGUF" + U32(3) + U64(1) + U64(0);
  out += U64(1) + "t" + U32(1) + U64(2) + U32(0) + U64(0);
  out += std::string((32 - out.size() % 32) % 32, '\0');
  return out + std::string(8, '\0') + std::string(24, '\0');  // the data, its padding
}

// A model folder with valid safetensors weights (and, for some tests, more).
class FrontDoorCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFileBytes(dir_.File("model.safetensors"),
                               ReadFileBytes(kCorpus + "valid/worked_example.safetensors")));
  }
  std::string Dir() const { return ShellQuoted(dir_.path()); }
  void AddEvilPickle() {
    ASSERT_TRUE(WriteFileBytes(dir_.File("pytorch_model.bin"), ReadFileBytes(kEvilPickle)));
  }
  TempDir dir_;
};

TEST_F(FrontDoorCliTest, SameFolderSameVerdictThroughCheckLintAndStats) {
  for (const char* command : {"check ", "lint ", "inspect --stats "}) {
    EXPECT_EQ(RunCli(command + Dir()).status, 0) << command;
    const testing::CliRun json = RunCli(std::string(command) + "--json " + Dir(), Streams::kStdoutOnly);
    EXPECT_EQ(json.status, 0) << command;
    EXPECT_NE(json.output.find("\"verdict\":\"valid\""), std::string::npos) << json.output;
    EXPECT_NE(json.output.find("\"format\":\"folder\""), std::string::npos) << json.output;
  }
}

TEST_F(FrontDoorCliTest, MaliciousPickleBesideValidWeightsIsRefusedByAll) {
  AddEvilPickle();
  for (const char* command : {"check ", "lint ", "inspect --stats "}) {
    const testing::CliRun run = RunCli(command + Dir());
    EXPECT_EQ(run.status, 1) << command << run.output;
    EXPECT_NE(run.output.find("refused: file 'pytorch_model.bin'"), std::string::npos)
        << command << run.output;
    EXPECT_EQ(run.output.find(": ok"), std::string::npos) << command << run.output;
    const testing::CliRun json = RunCli(std::string(command) + "--json " + Dir(), Streams::kStdoutOnly);
    EXPECT_EQ(json.status, 1) << command;
    EXPECT_NE(json.output.find("\"verdict\":\"refused\",\"code\":\"PickleGlobalRefused\""),
              std::string::npos) << command << json.output;
    EXPECT_NE(json.output.find("\"offset\":18,\"member\":\"pytorch_model.bin\""), std::string::npos)
        << json.output;
  }
}

TEST_F(FrontDoorCliTest, TheFileThatDecidesIsNamedOnce) {
  AddEvilPickle();
  const testing::CliRun run = RunCli("check " + Dir());
  size_t mentions = 0;
  for (size_t at = run.output.find("pytorch_model.bin"); at != std::string::npos;
       at = run.output.find("pytorch_model.bin", at + 1)) {
    ++mentions;
  }
  EXPECT_EQ(mentions, 1u) << run.output;  // the result line, never again as a warning
  EXPECT_EQ(run.output.find("warning: pickle-file"), std::string::npos) << run.output;
}

TEST_F(FrontDoorCliTest, CleanPickleStaysAWarningOfAValidFolder) {
  ASSERT_TRUE(WriteFileBytes(dir_.File("pytorch_model.bin"),
                             ReadFileBytes(kCorpus + "torch/valid/dtypes.zip.pt")));
  const testing::CliRun run = RunCli("check " + Dir());
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("warning: pickle-file: pytorch_model.bin: pickle-bearing file: clean"),
            std::string::npos) << run.output;
}

TEST_F(FrontDoorCliTest, FolderChecksItsGgufAndNpyFiles) {
  ASSERT_TRUE(WriteFileBytes(dir_.File("emb.npy"), NpyBytes()));
  ASSERT_TRUE(WriteFileBytes(dir_.File("model.gguf"), GgufBytes()));
  EXPECT_EQ(RunCli("check " + Dir()).status, 0);
  // One byte too many after the npy's data: the folder is invalid, naming the file.
  ASSERT_TRUE(WriteFileBytes(dir_.File("emb.npy"), NpyBytes() + "x"));
  const testing::CliRun run = RunCli("check --json " + Dir(), Streams::kStdoutOnly);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("\"verdict\":\"invalid\",\"code\":\"NpyDataLength\""), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\"member\":\"emb.npy\""), std::string::npos) << run.output;
}

TEST(FrontDoorFilesTest, FolderOfGgufOnlyIsChecked) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model.gguf"), GgufBytes()));
  const testing::CliRun run = RunCli("check " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 0) << run.output;
  TempDir empty;
  EXPECT_EQ(RunCli("check " + ShellQuoted(empty.path())).status, 1);  // nothing to check
}

TEST(FrontDoorFilesTest, PytorchFileByContentWhateverItsName) {
  TempDir dir;
  const std::string bin = dir.File("model.bin");
  ASSERT_TRUE(WriteFileBytes(bin, ReadFileBytes(kCorpus + "torch/valid/dtypes.legacy.pt")));
  const testing::CliRun check = RunCli("check " + ShellQuoted(bin));
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find(
                "valid: PyTorch checkpoint (legacy stream), 11 tensors, nothing outside the allowlist"),
            std::string::npos)
      << check.output;
  EXPECT_EQ(check.output.find("HeaderTooLarge"), std::string::npos) << check.output;
  const testing::CliRun inspect = RunCli("inspect " + ShellQuoted(bin));
  EXPECT_EQ(inspect.status, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("format: pytorch-legacy"), std::string::npos) << inspect.output;
  EXPECT_NE(inspect.output.find("  bf16 BF16  [3, 4] 24"), std::string::npos) << inspect.output;
  const testing::CliRun json = RunCli("inspect --json " + ShellQuoted(bin), Streams::kStdoutOnly);
  EXPECT_NE(json.output.find("{\"name\":\"f32\",\"dtype\":\"F32\",\"shape\":[3,4],\"bytes\":48}"),
            std::string::npos) << json.output;
}

TEST(FrontDoorFilesTest, RefusedPickleThroughCheckAndInspect) {
  const testing::CliRun check = RunCli("check " + ShellQuoted(kEvilPickle));
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.output.find(": refused: names code"), std::string::npos) << check.output;
  EXPECT_EQ(RunCli("inspect " + ShellQuoted(kEvilPickle)).status, 1);
}

TEST(FrontDoorFilesTest, GgufAndNpyThroughCheckAndInspect) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("weights"), NpyBytes()));
  ASSERT_TRUE(WriteFileBytes(dir.File("model"), GgufBytes()));
  const testing::CliRun npy = RunCli("check --json " + ShellQuoted(dir.File("weights")));
  EXPECT_EQ(npy.status, 0);
  EXPECT_NE(npy.output.find("\"format\":\"npy\",\"verdict\":\"valid\""), std::string::npos) << npy.output;
  const testing::CliRun gguf = RunCli("check --json " + ShellQuoted(dir.File("model")));
  EXPECT_EQ(gguf.status, 0);
  EXPECT_NE(gguf.output.find("\"format\":\"gguf\",\"verdict\":\"valid\""), std::string::npos) << gguf.output;
  EXPECT_EQ(RunCli("inspect " + ShellQuoted(dir.File("weights"))).status, 0);
  EXPECT_EQ(RunCli("inspect " + ShellQuoted(dir.File("model"))).status, 0);
}

TEST(FrontDoorFilesTest, FlagThatDoesNotApplyIsAUsageError) {
  const std::string pt = ShellQuoted(kCorpus + "torch/valid/dtypes.zip.pt");
  const testing::CliRun run = RunCli("check --canonical " + pt);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--canonical applies to safetensors files, not pytorch-zip"),
            std::string::npos) << run.output;
  // Accept case: the same flag on a safetensors file.
  EXPECT_EQ(RunCli("check --canonical " + ShellQuoted(kCorpus + "valid/worked_example.safetensors"))
                .status == 2, false);
}

TEST(FrontDoorFilesTest, ExitStatusFollowsTheVerdict) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("broken"), U64(uint64_t{1} << 40) + "{}"));
  EXPECT_EQ(RunCli("check " + ShellQuoted(dir.File("broken"))).status, 1);     // invalid
  EXPECT_EQ(RunCli("check " + ShellQuoted(kEvilPickle)).status, 1);           // refused
  EXPECT_EQ(RunCli("check " + ShellQuoted(dir.File("absent"))).status, 2);    // error
  EXPECT_EQ(RunCli("inspect " + ShellQuoted(dir.File("absent"))).status, 2);
  EXPECT_EQ(RunCli("lint " + ShellQuoted(dir.File("absent"))).status, 2);
  const testing::CliRun json = RunCli("check --json " + ShellQuoted(dir.File("absent")));
  EXPECT_NE(json.output.find("\"verdict\":\"error\",\"code\":\"IoError\""), std::string::npos)
      << json.output;
  // The envelope (everything before "ok") has no offset: it would point into no file.
  const std::string envelope = json.output.substr(0, json.output.find(",\"ok\""));
  EXPECT_EQ(envelope.find("\"offset\""), std::string::npos) << json.output;
}

}  // namespace
}  // namespace stguard
