// SPDX-License-Identifier: Apache-2.0
// `stguard convert` on the command line. Text mode and --json take one path and differ
// only in how the result is printed, so every failure class exits alike in both: invalid
// input and refused input 1, I/O and usage errors 2; nothing is written for any of them.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "stguard/reader.h"
#include "support/convert_samples.h"
#include "support/gguf_fixtures.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

const std::string kCorpus = std::string(STGUARD_CORPUS_DIR) + "/";

bool Exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

TEST(ConvertCliTest, ConvertsInPlaceAndReportsUsageErrors) {
  TempDir dir;
  const std::string path = dir.File("m.safetensors");
  ASSERT_TRUE(WriteFileBytes(path, MixedCheckpoint()));
  const std::string quoted = "'" + path + "'";
  ASSERT_EQ(RunCli("convert " + quoted + " " + quoted + " --dtype BF16").status, 0);
  Result<Checkpoint> out = Checkpoint::Open(path);
  ASSERT_TRUE(out.ok()) << out.error().ToString();
  EXPECT_EQ(out->Find("f32")->dtype, Dtype::kBF16);
  EXPECT_EQ(out->Find("f64")->dtype, Dtype::kBF16);
  EXPECT_EQ(out->Find("i32")->dtype, Dtype::kI32);
  ASSERT_EQ(RunCli("convert " + quoted + " '" + dir.File("f32.safetensors") + "' --dtype=F32").status, 0);
  EXPECT_EQ(Checkpoint::Open(dir.File("f32.safetensors"))->Find("f32")->dtype, Dtype::kF32);

  EXPECT_EQ(RunCli("convert " + quoted + " " + quoted).status, 2);                   // no --dtype
  EXPECT_EQ(RunCli("convert " + quoted + " " + quoted + " --dtype I8").status, 2);   // not a target
  EXPECT_EQ(RunCli("convert " + quoted + " --dtype F16").status, 2);                 // no OUT
  EXPECT_EQ(RunCli("convert '" + dir.File("missing") + "' x --dtype F16").status, 2);
  ASSERT_TRUE(WriteFileBytes(dir.File("bad.safetensors"), "12345678"));
  EXPECT_EQ(RunCli("convert '" + dir.File("bad.safetensors") + "' x --dtype F16").status, 1);
}

TEST_F(GgufConvert, CliConvertsNotesLeftOutArraysAndRefusesWithExitOne) {
  GgufModel model = SimpleGgufModel();
  model.kvs.push_back(GgufI32Array("a.long", std::vector<int32_t>(2000, 1)));
  const std::string in = WriteModel(model, "in.bin");  // the magic decides, not the name
  CliRun run = RunCli("convert " + ShellQuoted(in) + " " + ShellQuoted(out_));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("metadata 'a.long' (2000 i32 elements) left out"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("2 tensors (1 dequantized)"), std::string::npos) << run.output;
  run = RunCli("convert " + ShellQuoted(in) + " " + ShellQuoted(out_) + " --all-metadata --dtype BF16");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("left out"), std::string::npos) << run.output;
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->FindMetadata("a.long").has_value());
  EXPECT_EQ(out->Find("token_embd.weight")->dtype, Dtype::kBF16);

  run = RunCli("convert " + ShellQuoted(in) + " " + ShellQuoted(out_) + " --dtype I8");
  EXPECT_EQ(run.status, 2) << run.output;
  // --all-metadata is for a GGUF IN only: with a safetensors IN it is a usage error.
  run = RunCli("convert " + ShellQuoted(out_) + " " + ShellQuoted(dir_.File("x.safetensors")) +
               " --dtype F16 --all-metadata");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--all-metadata applies to GGUF, not to safetensors"),
            std::string::npos)
      << run.output;
  model.tensors.push_back({"act", 9, {32}, {}, {}});
  const std::string bad = WriteModel(model, "bad.gguf");
  const std::string bad_out = dir_.File("bad.safetensors");
  run = RunCli("convert " + ShellQuoted(bad) + " " + ShellQuoted(bad_out));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("GgufNotDequantizable"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("'act'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("q8_1"), std::string::npos) << run.output;
  struct stat info;
  EXPECT_NE(::stat(bad_out.c_str(), &info), 0);
}

// ConversionCase is one conversion and what both modes must say about it.
struct ConversionCase {
  std::string what;
  std::string in;
  std::string out;
  std::string options;
  int status;
  std::string verdict;  // the envelope's word
  std::string code;     // the error code's name; empty when valid
  std::string text;     // what text mode says on stderr, when not the code's name
};

// ExpectAlikeInBothModes runs the conversion as text and with --json: the same exit
// status; the text names the error on stderr, the JSON result is the one line on stdout
// with the verdict and code; nothing is left at OUT unless it was valid.
void ExpectAlikeInBothModes(const ConversionCase& c) {
  const std::string arguments = ShellQuoted(c.in) + " " + ShellQuoted(c.out) + " " + c.options;
  const CliRun text = RunCli("convert " + arguments);
  EXPECT_EQ(text.status, c.status) << c.what << ": " << text.output;
  // Valid: the summary names OUT; otherwise the error's code, or the words it is told in.
  const std::string said = c.code.empty() ? c.out + ": " : (c.text.empty() ? c.code : c.text);
  EXPECT_NE(text.output.find(said), std::string::npos) << c.what << ": " << text.output;
  EXPECT_EQ(Exists(c.out), c.status == 0) << c.what;
  if (Exists(c.out)) {
    ASSERT_EQ(::unlink(c.out.c_str()), 0);
  }

  const CliRun json = RunCli("convert --json " + arguments, Streams::kStdoutOnly);
  EXPECT_EQ(json.status, c.status) << c.what << ": " << json.output;
  EXPECT_EQ(json.output.find('\n'), json.output.size() - 1) << c.what << ": " << json.output;
  EXPECT_EQ(json.output.rfind("{\"schema_version\":2,", 0), 0u) << c.what << ": " << json.output;
  EXPECT_NE(json.output.find("\"verdict\":\"" + c.verdict + "\""), std::string::npos)
      << c.what << ": " << json.output;
  if (c.code.empty()) {
    EXPECT_EQ(json.output.find("\"code\""), std::string::npos) << c.what << ": " << json.output;
    EXPECT_NE(json.output.find("\"output\":[\"" + c.out + "\"]"), std::string::npos)
        << c.what << ": " << json.output;
  } else {
    EXPECT_NE(json.output.find("\"code\":\"" + c.code + "\""), std::string::npos)
        << c.what << ": " << json.output;
    EXPECT_NE(json.output.find("\"output\":[]"), std::string::npos) << c.what << ": " << json.output;
  }
  EXPECT_EQ(Exists(c.out), c.status == 0) << c.what;
  if (Exists(c.out)) {
    ASSERT_EQ(::unlink(c.out.c_str()), 0);
  }
}

TEST(ConvertCliTest, EveryOutcomeExitsAlikeInTextAndJson) {
  TempDir dir;
  const std::string valid_st = kCorpus + "valid/worked_example.safetensors";
  const std::string valid_pt = kCorpus + "torch/valid/dtypes.zip.pt";
  // A malicious pickle named as a checkpoint: the format is told by content, not name.
  const std::string evil = dir.File("pytorch_model.bin");
  ASSERT_TRUE(WriteFileBytes(
      evil, ReadFileBytes(kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt")));
  const std::string truncated = dir.File("truncated.safetensors");
  const std::string whole = ReadFileBytes(valid_st);
  ASSERT_TRUE(WriteFileBytes(truncated, whole.substr(0, whole.size() - 4)));
  // A valid GGUF whose q8_1 tensor has no decoder: check accepts it, convert cannot.
  GgufModel model = SimpleGgufModel();
  const std::string gguf = dir.File("m.gguf");
  ASSERT_TRUE(WriteFileBytes(gguf, Encode(model)));
  model.tensors.push_back({"act", 9, {32}, {}, {}});
  const std::string undecodable = dir.File("q8_1.gguf");
  ASSERT_TRUE(WriteFileBytes(undecodable, Encode(model)));
  // A folder whose one shard `check DIR` refuses (the pickle cannot be proven safe), though
  // its first error is not one that runs code: refused, as check says.
  const std::string refused_folder = dir.File("refused_folder");
  ASSERT_EQ(::mkdir(refused_folder.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(
      refused_folder + "/pytorch_model.bin",
      ReadFileBytes(kCorpus + "torch/refuse/PickleBadArguments__build_setattr.pt")));
  const std::string out = dir.File("out.safetensors");
  const std::string nowhere = dir.File("no/such/dir/out.safetensors");

  const ConversionCase cases[] = {
      // Accepted, one of each input kind.
      {"safetensors", valid_st, out, "--dtype F16", 0, "valid", ""},
      {"torch", valid_pt, out, "", 0, "valid", ""},
      {"gguf", gguf, out, "", 0, "valid", ""},
      // Refused: loading it would run code.
      {"malicious .bin", evil, out, "", 1, "refused", "PickleGlobalRefused"},
      {"malicious .bin to F16", evil, out, "--dtype F16", 1, "refused", "PickleGlobalRefused"},
      {"folder with a refused shard", refused_folder, dir.File("out_folder"), "", 1, "refused",
       "PickleBadArguments"},
      // Invalid: malformed input, or valid input whose content cannot be converted.
      {"truncated safetensors", truncated, out, "--dtype F16", 1, "invalid",
       "MetadataIncompleteBuffer"},
      {"tensors under a key", kCorpus + "torch/valid/training.zip.pt", out, "", 1, "invalid",
       "NotAStateDict",
       "needs --key: nothing outside the allowlist; the tensors sit under a key: --key "
       "state_dict"},
      {"a type with no decoder", undecodable, out, "", 1, "invalid", "GgufNotDequantizable"},
      // Error: no verdict on IN (the destination cannot be written, the request is unusable).
      {"missing folder (safetensors)", valid_st, nowhere, "--dtype F16", 2, "error", "IoError"},
      {"missing folder (torch)", valid_pt, nowhere, "", 2, "error", "IoError"},
      {"missing folder (gguf)", gguf, nowhere, "", 2, "error", "IoError"},
      {"missing IN", dir.File("absent"), out, "--dtype F16", 2, "error", "IoError"},
      {"--key on safetensors", valid_st, out, "--key x", 2, "error", "InvalidArgument",
       "--key applies to PyTorch, not to safetensors"},
      {"no --dtype for safetensors", valid_st, out, "", 2, "error", "InvalidArgument",
       "a safetensors IN needs --dtype"},
  };
  for (const ConversionCase& c : cases) ExpectAlikeInBothModes(c);
}

TEST(ConvertCliTest, JsonPutsWhatTextPrintsForAPersonInNotes) {
  TempDir dir;
  const std::string in = kCorpus + "torch/valid/tied.zip.pt";
  const std::string out = dir.File("out.safetensors");
  CliRun run = RunCli("convert --drop-aliases " + ShellQuoted(in) + " " + ShellQuoted(out),
                      Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("dropped alias 'lm_head.weight'"), std::string::npos) << run.output;
  ASSERT_EQ(::unlink(out.c_str()), 0);
  // With --json, stdout is the result alone, and the note is in it.
  run = RunCli("convert --json --drop-aliases " + ShellQuoted(in) + " " + ShellQuoted(out),
               Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.rfind("{\"schema_version\":2,", 0), 0u) << run.output;
  EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << run.output;
  EXPECT_NE(run.output.find("\"tensors\":2,\"notes\":[\"dropped alias 'lm_head.weight'"),
            std::string::npos)
      << run.output;
  // Usage: OUT "-" would mix the file with the JSON result.
  run = RunCli("convert --json " + ShellQuoted(kCorpus + "valid/worked_example.safetensors") +
               " - --dtype F16", Streams::kStdoutOnly);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("\"verdict\":\"error\""), std::string::npos) << run.output;
}

}  // namespace
}  // namespace stguard::testing
