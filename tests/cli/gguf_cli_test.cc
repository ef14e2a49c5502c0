// SPDX-License-Identifier: Apache-2.0
// `stguard check` and `stguard inspect` on GGUF files: recognised by magic, the JSON shape,
// exact integers, shortest floats, non-finite floats as strings, escaped attacker text.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "support/gguf_encoder.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

GgufModel RichModel() {
  GgufModel model = SimpleGgufModel();
  model.kvs.push_back(GgufU64("some.big", 18446744073709551615ull));
  model.kvs.push_back(GgufI64("some.negative", -9223372036854775807ll - 1));
  model.kvs.push_back(GgufF32("some.third", 0.1f));
  model.kvs.push_back(GgufF64("some.double", 0.1));
  model.kvs.push_back(GgufF32("some.nan", std::numeric_limits<float>::quiet_NaN()));
  model.kvs.push_back(GgufF64("some.inf", -std::numeric_limits<double>::infinity()));
  model.kvs.push_back(GgufF32("some.neg_zero", -0.0f));
  model.kvs.push_back(GgufF64("some.one", 1.0));
  model.kvs.push_back(GgufStr("some.hostile", "\x1b[31mred\n\"quoted\""));
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) many.push_back("tok" + std::to_string(i));
  model.kvs.push_back(GgufStrArray("some.many", many));
  return model;
}

class GgufCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // No .gguf extension: the magic decides.
    path_ = dir_.File("model.bin");
    ASSERT_TRUE(WriteFileBytes(path_, Encode(RichModel())));
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(GgufCli, CheckRecognisesGgufByMagic) {
  const CliRun run = RunCli("check " + ShellQuoted(path_));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("valid: GGUF v3, 2 tensors (F32, Q8_0), 16 keys"), std::string::npos) << run.output;
  const CliRun json = RunCli("check --json " + ShellQuoted(path_), Streams::kStdoutOnly);
  EXPECT_NE(json.output.find("\"format\":\"gguf\",\"verdict\":\"valid\",\"ok\":true,\"tensors\":2"), std::string::npos)
      << json.output;
}

TEST_F(GgufCli, CheckRefusesAnInvalidGgufWithItsCode) {
  GgufModel model = RichModel();
  model.trailing = "junk";
  const std::string bad = dir_.File("bad.gguf");
  ASSERT_TRUE(WriteFileBytes(bad, Encode(model)));
  const CliRun run = RunCli("check " + ShellQuoted(bad));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("GgufTrailingBytes at byte"), std::string::npos) << run.output;
  const CliRun json = RunCli("check --json " + ShellQuoted(bad), Streams::kStdoutOnly);
  EXPECT_EQ(json.status, 1);
  EXPECT_NE(json.output.find("\"code\":\"GgufTrailingBytes\""), std::string::npos) << json.output;
}

TEST_F(GgufCli, InspectJsonHasTheDocumentedShape) {
  const CliRun run = RunCli("inspect --json " + ShellQuoted(path_), Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string& out = run.output;
  for (const char* expected : {
           "\"format\":\"gguf\"", "\"version\":3,\"alignment\":32,\"metadata\":{",
           "\"llama.context_length\":{\"type\":\"u32\",\"value\":4096}",
           "\"some.big\":{\"type\":\"u64\",\"value\":18446744073709551615}",
           "\"some.negative\":{\"type\":\"i64\",\"value\":-9223372036854775808}",
           "\"some.third\":{\"type\":\"f32\",\"value\":0.1}",
           "\"some.double\":{\"type\":\"f64\",\"value\":0.1}",
           "\"some.nan\":{\"type\":\"f32\",\"value\":\"nan\"}",
           "\"some.inf\":{\"type\":\"f64\",\"value\":\"-inf\"}",
           // Floats read back as floats: "-0" and "1" would be integers to Python's json.
           "\"some.neg_zero\":{\"type\":\"f32\",\"value\":-0.0}",
           "\"some.one\":{\"type\":\"f64\",\"value\":1.0}",
           "\"general.flag\":{\"type\":\"bool\",\"value\":true}",
           "\"some.hostile\":{\"type\":\"string\",\"value\":\"\\u001b[31mred\\n\\\"quoted\\\"\"}",
           "\"tokenizer.ggml.token_type\":{\"type\":\"array\",\"element_type\":\"i32\","
           "\"value\":[1,3,1]}",
           "\"tok19\"]",  // complete in JSON
           "{\"name\":\"token_embd.weight\",\"type\":\"f32\",\"ne\":[4,3],\"shape\":[3,4],"
           "\"offset\":",
           "\"type\":\"q8_0\",\"ne\":[64,2],\"shape\":[2,64]"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
}

TEST_F(GgufCli, InspectTableShortensArraysAndEscapesText) {
  const CliRun run = RunCli("inspect " + ShellQuoted(path_), Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("\"tok7\", ...] (20 entries)"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("tok8"), std::string::npos);
  EXPECT_EQ(run.output.find('\x1b'), std::string::npos);
  EXPECT_NE(run.output.find("\\x1b[31mred\\x0a"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("format: gguf version 3, alignment 32"), std::string::npos);
  // Floats as in --json, unquoted.
  for (const char* line : {"some.neg_zero (f32): -0.0\n", "some.one (f64): 1.0\n",
                           "some.third (f32): 0.1\n", "some.nan (f32): nan\n",
                           "some.inf (f64): -inf\n"}) {
    EXPECT_NE(run.output.find(line), std::string::npos) << line << run.output;
  }
}

TEST_F(GgufCli, InspectRefusesAnInvalidGgufWithExitOne) {
  GgufModel model = RichModel();
  model.tensors[0].type = 5;
  const std::string bad = dir_.File("bad.gguf");
  ASSERT_TRUE(WriteFileBytes(bad, Encode(model)));
  const CliRun run = RunCli("inspect " + ShellQuoted(bad));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("GgufUnknownType"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace stguard::testing
