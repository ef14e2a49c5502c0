// SPDX-License-Identifier: Apache-2.0
// `stguard inspect --stats` on the command line: per-tensor statistics of a file and of a
// sharded folder, as text and --json, kept in memory or spilled alike, and exit statuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/writer.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(StatsCliTest, TextAndJsonForAFileAndAFolder) {
  TempDir dir;
  static const std::vector<float> a = {1.0f, -2.0f, kNan, kInf, 0.5f};
  static const std::vector<int8_t> b = {-3, 5, 7};
  static const std::vector<uint8_t> c = {0x12, 0x34};  // F4: not scanned
  Writer first;
  ASSERT_TRUE(first.AddTensor("a", Dtype::kF32, {5}, std::as_bytes(std::span(a))).ok());
  ASSERT_TRUE(first.AddTensor("c", Dtype::kF4, {4}, std::as_bytes(std::span(c))).ok());
  ASSERT_TRUE(first.WriteToFile(dir.File("model-00001-of-00002.safetensors")).ok());
  Writer second;
  ASSERT_TRUE(second.AddTensor("b", Dtype::kI8, {3}, std::as_bytes(std::span(b))).ok());
  ASSERT_TRUE(second.WriteToFile(dir.File("model-00002-of-00002.safetensors")).ok());
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors.index.json"),
      R"({"metadata":{"total_size":25},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
      R"("c":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})"));

  CliRun result = RunCli("inspect --stats --json '" + dir.path() + "'", Streams::kStdoutOnly);
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find(R"("name":"a","shard":"model-00001-of-00002.safetensors","dtype":"F32",)"
                               R"("shape":[5],"elements":5,"scanned":true,"min":-2,"max":1,)"
                               R"("mean":-0.16666666666666666,"nan":1,"pos_inf":1,"neg_inf":0})"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(R"("name":"c","shard":"model-00001-of-00002.safetensors","dtype":"F4",)"
                               R"("shape":[4],"elements":4,"scanned":false})"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(R"("name":"b","shard":"model-00002-of-00002.safetensors","dtype":"I8",)"
                               R"("shape":[3],"elements":3,"scanned":true,"min":-3,"max":7,"mean":3})"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(R"("totals":{"tensors":3,"shards":2,"bytes":25,)"), std::string::npos)
      << result.output;

  result = RunCli("inspect --stats '" + dir.File("model-00002-of-00002.safetensors") + "'", Streams::kStdoutOnly);
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("  b    I8    [3]   -3  7   3    -   -    -"), std::string::npos)
      << result.output;

  EXPECT_EQ(RunCli("inspect --stats", Streams::kStdoutOnly).status, 2);
  EXPECT_EQ(RunCli("inspect --stats --bogus '" + dir.path() + "'", Streams::kStdoutOnly).status, 2);
  EXPECT_EQ(RunCli("inspect --stats '" + dir.File("missing") + "'", Streams::kStdoutOnly).status, 2);
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), "{}"));
  EXPECT_EQ(RunCli("inspect --stats '" + dir.path() + "'", Streams::kStdoutOnly).status, 1);
}

// inspect --stats keeps each tensor's statistics between its scan and its printing pass in
// memory when they are small next to the header, else in a temporary file: the output is
// the same either way, and a folder's text table names each shard before its rows.
TEST(StatsCliTest, StatsKeptInMemoryOrSpilledPrintAlike) {
  TempDir dir;
  static const std::vector<float> a = {1.0f, -2.0f, kNan, kInf, 0.5f};
  static const std::vector<int8_t> b = {-3, 5, 7};
  const auto write = [&](const std::string& name, bool big_metadata) {
    Writer writer;
    ASSERT_TRUE(writer.AddTensor("a", Dtype::kF32, {5}, std::as_bytes(std::span(a))).ok());
    ASSERT_TRUE(writer.AddTensor("b", Dtype::kI8, {3}, std::as_bytes(std::span(b))).ok());
    // 2 tensors' statistics take 144 bytes: a 4 KB header keeps them in memory, a
    // 160-byte one does not.
    if (big_metadata) {
      ASSERT_TRUE(writer.AddMetadata("pad", std::string(4096, 'x')).ok());
    }
    ASSERT_TRUE(writer.WriteToFile(dir.File(name)).ok());
  };
  write("spilled.safetensors", false);
  write("kept.safetensors", true);
  const auto rows = [&](const std::string& name, const char* flags) {
    CliRun run = RunCli(std::string("inspect --stats ") + flags + " '" +
                                              dir.File(name) + "'",
                                          Streams::kStdoutOnly);
    EXPECT_EQ(run.status, 0) << run.output;
    std::string out = run.output;
    // Drop what differs by design: the file name, header size and timing.
    if (std::string_view(flags).empty()) out = out.substr(out.find('\n') + 1);
    for (size_t at; (at = out.find(name)) != std::string::npos;) out.replace(at, name.size(), "F");
    const size_t timing = out.find("scanned ");
    if (timing != std::string::npos) out.resize(timing);
    const size_t seconds = out.find("\"seconds\"");
    if (seconds != std::string::npos) out.resize(seconds);
    const size_t tensors = out.find("\"tensors\":[");
    if (tensors != std::string::npos) out = out.substr(tensors);
    return out;
  };
  for (const char* flags : {"", "--json"}) {
    const std::string spilled = rows("spilled.safetensors", flags);
    EXPECT_EQ(spilled, rows("kept.safetensors", flags)) << flags;
    EXPECT_NE(spilled.find("-2"), std::string::npos) << spilled;
  }
  EXPECT_NE(rows("spilled.safetensors", "").find("  a    F32   [5]   -2  1   -0.1666667 1   1    0"),
            std::string::npos)
      << rows("spilled.safetensors", "");

  // A folder of two shards: "shard NAME:" before each shard's rows, in text.
  TempDir folder;
  Writer first;
  ASSERT_TRUE(first.AddTensor("a", Dtype::kF32, {5}, std::as_bytes(std::span(a))).ok());
  ASSERT_TRUE(first.WriteToFile(folder.File("one.safetensors")).ok());
  Writer second;
  ASSERT_TRUE(second.AddTensor("b", Dtype::kI8, {3}, std::as_bytes(std::span(b))).ok());
  ASSERT_TRUE(second.WriteToFile(folder.File("two.safetensors")).ok());
  CliRun run = RunCli("inspect --stats '" + folder.path() + "'",
                                        Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  const size_t one = run.output.find("shard one.safetensors:\n  a ");
  const size_t two = run.output.find("shard two.safetensors:\n  b ");
  EXPECT_NE(one, std::string::npos) << run.output;
  EXPECT_NE(two, std::string::npos) << run.output;
  EXPECT_LT(one, two) << run.output;
}

}  // namespace
}  // namespace stguard::testing
