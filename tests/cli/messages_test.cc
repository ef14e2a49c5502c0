// SPDX-License-Identifier: Apache-2.0
// Messages and outputs of `check`, `scan` and `convert` that a person acts on: an offset
// only where it points into a file, the path said once, a folder with nothing to scan
// said so, a checkpoint needing --key told which keys, the size a folder conversion
// wrote, and --dtype and the other options checked against the input's format.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <string>

#include "stguard/reader.h"
#include "stguard/json_tokenizer.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::CliRun;
using testing::RunCli;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

std::string TorchFixture(const std::string& name) {
  return std::string(STGUARD_CORPUS_DIR) + "/torch/" + name;
}

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

bool Exists(const std::string& path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

// ---- an offset only where it points into a file; the path said once -------------------

TEST(CliMessagesTest, AnUnreadableFileHasNoOffsetAndItsPathOnce) {
  TempDir dir;
  const std::string missing = dir.File("absent.safetensors");
  const CliRun run = RunCli("check " + ShellQuoted(missing));
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_EQ(run.output.find("at byte"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("IoError: cannot open file: No such file or directory"),
            std::string::npos) << run.output;
  EXPECT_EQ(Occurrences(run.output, missing), 1u) << run.output;
  const CliRun json = RunCli("convert " + ShellQuoted(missing) + " " +
                             ShellQuoted(dir.File("out")) + " --dtype F16");
  EXPECT_EQ(json.output.find("at byte"), std::string::npos) << json.output;
  // Reject: an error inside a file keeps its offset, byte 0 included.
  ASSERT_TRUE(WriteFileBytes(dir.File("text.safetensors"), "this is text, not a header"));
  const CliRun content = RunCli("check " + ShellQuoted(dir.File("text.safetensors")));
  EXPECT_EQ(content.status, 1) << content.output;
  EXPECT_NE(content.output.find("HeaderTooLarge at byte 0"), std::string::npos)
      << content.output;
}

TEST(CliMessagesTest, JsonGivesAnOffsetOnlyWhereItPointsIntoTheFile) {
  TempDir dir;
  const CliRun missing = RunCli("scan --json " + ShellQuoted(dir.File("absent.pt")),
                                testing::Streams::kStdoutOnly);
  EXPECT_TRUE(ValidateJson(missing.output).ok()) << missing.output;
  EXPECT_NE(missing.output.find("\"code\":\"IoError\""), std::string::npos) << missing.output;
  EXPECT_EQ(missing.output.find("\"offset\""), std::string::npos) << missing.output;
  const CliRun refused =
      RunCli("scan --json " + ShellQuoted(TorchFixture("refuse/PickleGlobalRefused__zip_eval.pt")),
             testing::Streams::kStdoutOnly);
  EXPECT_NE(refused.output.find("\"code\":\"PickleGlobalRefused\",\"offset\":"),
            std::string::npos) << refused.output;
}

// ---- scan: an empty folder said so; a checkpoint under a key is not refused ------------

TEST(CliMessagesTest, ScanOfAFolderWithoutPicklesSaysSo) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("notes.txt"), "no pickles here"));
  CliRun run = RunCli("scan " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("no pickle-bearing files"), std::string::npos) << run.output;
  run = RunCli("scan --json " + ShellQuoted(dir.path()), testing::Streams::kStdoutOnly);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(ValidateJson(run.output).ok()) << run.output;
  EXPECT_NE(run.output.find("\"pickle_files\":0"), std::string::npos) << run.output;
  // Reject: a folder that holds one reports it, not "none".
  ASSERT_EQ(std::system(("cp " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                         ShellQuoted(dir.File("pytorch_model.bin"))).c_str()), 0);
  run = RunCli("scan " + ShellQuoted(dir.path()));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("no pickle-bearing files"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("pytorch_model.bin: pytorch-zip: clean"), std::string::npos)
      << run.output;
}

TEST(CliMessagesTest, ACheckpointUnderAKeyNeedsKeyAndListsIt) {
  TempDir dir;
  const std::string training = TorchFixture("valid/training.zip.pt");
  CliRun run = RunCli("scan " + ShellQuoted(training));
  EXPECT_NE(run.output.find("needs --key"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--key state_dict"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("refused"), std::string::npos) << run.output;
  run = RunCli("convert " + ShellQuoted(training) + " " + ShellQuoted(dir.File("t.safetensors")));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("needs --key"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--key state_dict"), std::string::npos) << run.output;
  EXPECT_FALSE(Exists(dir.File("t.safetensors")));
  // Accept: with the key it converts.
  run = RunCli("convert " + ShellQuoted(training) + " " + ShellQuoted(dir.File("t.safetensors")) +
               " --key state_dict");
  EXPECT_EQ(run.status, 0) << run.output;
}

// ---- convert DIR OUTDIR ----------------------------------------------------------------

// DataBytes is the sum of the tensors' sizes in a safetensors file.
uint64_t DataBytes(const std::string& path) {
  const Result<Checkpoint> checkpoint = Checkpoint::Open(path);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  if (!checkpoint.ok()) return 0;
  uint64_t total = 0;
  for (const TensorView& tensor : checkpoint->tensors()) total += tensor.byte_size();
  return total;
}

TEST(CliMessagesTest, AOneFileFolderConversionCountsItsDataBytes) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("in").c_str(), 0777), 0);
  ASSERT_EQ(std::system(("cp " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                         ShellQuoted(dir.File("in/pytorch_model.bin"))).c_str()), 0);
  const CliRun run = RunCli("convert " + ShellQuoted(dir.File("in")) + " " +
                            ShellQuoted(dir.File("out")));
  ASSERT_EQ(run.status, 0) << run.output;
  const uint64_t bytes = DataBytes(dir.File("out/model.safetensors"));
  EXPECT_GT(bytes, 0u);
  EXPECT_NE(run.output.find("(" + std::to_string(bytes) + " data bytes)"), std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("(0 data bytes)"), std::string::npos) << run.output;
}

TEST(CliMessagesTest, OutdirIsCreatedWithItsParentsAndRemovedOnRefusal) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("good").c_str(), 0777), 0);
  ASSERT_EQ(::mkdir(dir.File("bad").c_str(), 0777), 0);
  ASSERT_EQ(std::system(("cp " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                         ShellQuoted(dir.File("good/pytorch_model.bin"))).c_str()), 0);
  ASSERT_EQ(std::system(("cp " +
                         ShellQuoted(TorchFixture("refuse/PickleGlobalRefused__zip_eval.pt")) +
                         " " + ShellQuoted(dir.File("bad/pytorch_model.bin"))).c_str()), 0);
  // Accept: missing parents are made, as mkdir -p does.
  CliRun run = RunCli("convert " + ShellQuoted(dir.File("good")) + " " +
                      ShellQuoted(dir.File("a/b/c")));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Exists(dir.File("a/b/c/model.safetensors")));
  // Reject: a refused conversion leaves no folder behind, nor any parent it made...
  run = RunCli("convert " + ShellQuoted(dir.File("bad")) + " " + ShellQuoted(dir.File("x/y")));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_FALSE(Exists(dir.File("x")));
  // ...and an empty folder the user made stays, empty.
  ASSERT_EQ(::mkdir(dir.File("empty").c_str(), 0777), 0);
  run = RunCli("convert " + ShellQuoted(dir.File("bad")) + " " + ShellQuoted(dir.File("empty")));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_EQ(::rmdir(dir.File("empty").c_str()), 0);  // there, and still empty
}

TEST(CliMessagesTest, AFolderThatCannotBeMadeSaysWhy) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("good").c_str(), 0777), 0);
  ASSERT_EQ(std::system(("cp " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                         ShellQuoted(dir.File("good/pytorch_model.bin"))).c_str()), 0);
  ASSERT_TRUE(WriteFileBytes(dir.File("plain"), "a file, not a folder"));
  const CliRun run = RunCli("convert " + ShellQuoted(dir.File("good")) + " " +
                            ShellQuoted(dir.File("plain/out")));
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("Not a directory"), std::string::npos) << run.output;
  EXPECT_EQ(testing::ReadFileBytes(dir.File("plain")), "a file, not a folder");
}

TEST(CliMessagesTest, AnOutdirThatHoldsFilesIsRefusedUntouched) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("good").c_str(), 0777), 0);
  ASSERT_EQ(std::system(("cp " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                         ShellQuoted(dir.File("good/pytorch_model.bin"))).c_str()), 0);
  ASSERT_EQ(::mkdir(dir.File("out").c_str(), 0777), 0);
  ASSERT_TRUE(WriteFileBytes(dir.File("out/model.safetensors"), "the user's file"));
  CliRun run = RunCli("convert " + ShellQuoted(dir.File("good")) + " " +
                      ShellQuoted(dir.File("out")));
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find(dir.File("out") + ": error: IoError: the output folder is not empty"),
            std::string::npos) << run.output;
  EXPECT_EQ(testing::ReadFileBytes(dir.File("out/model.safetensors")), "the user's file");
  // Accept: once empty, the same folder takes the conversion.
  ASSERT_EQ(::unlink(dir.File("out/model.safetensors").c_str()), 0);
  run = RunCli("convert " + ShellQuoted(dir.File("good")) + " " + ShellQuoted(dir.File("out")));
  EXPECT_EQ(run.status, 0) << run.output;
}

// ---- --dtype for every input; options that do not apply are usage errors --------------

TEST(CliMessagesTest, DtypeConvertsATorchCheckpointAsItDoesSafetensors) {
  TempDir dir;
  const std::string torch_file = TorchFixture("valid/dtypes.zip.pt");
  const std::string f32 = dir.File("plain.safetensors");
  const std::string via_safetensors = dir.File("via_safetensors.safetensors");
  const std::string direct = dir.File("direct.safetensors");
  ASSERT_EQ(RunCli("convert " + ShellQuoted(torch_file) + " " + ShellQuoted(f32)).status, 0);
  ASSERT_EQ(RunCli("convert " + ShellQuoted(f32) + " " + ShellQuoted(via_safetensors) +
                   " --dtype F16").status, 0);
  const CliRun run =
      RunCli("convert " + ShellQuoted(torch_file) + " " + ShellQuoted(direct) + " --dtype F16");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("HeaderTooLarge"), std::string::npos) << run.output;
  // The same bytes as converting the plain conversion: one rounding, the same rules.
  EXPECT_EQ(testing::ReadFileBytes(direct), testing::ReadFileBytes(via_safetensors));
  const Result<Checkpoint> checkpoint = Checkpoint::Open(direct);
  ASSERT_TRUE(checkpoint.ok());
  bool any_f16 = false;
  for (const TensorView& tensor : checkpoint->tensors()) {
    EXPECT_NE(tensor.dtype, Dtype::kF32) << tensor.name;
    any_f16 |= tensor.dtype == Dtype::kF16;
  }
  EXPECT_TRUE(any_f16);
  // Reject: a dtype convert does not write.
  EXPECT_EQ(RunCli("convert " + ShellQuoted(torch_file) + " " + ShellQuoted(dir.File("x")) +
                   " --dtype I8").status, 2);
}

// NpyOfFloats is a version 1.0 .npy file of little-endian F32 values 1, 2 and 0.5.
std::string NpyOfFloats() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size() & 0xFF);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  file += std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x00\x3f", 12);
  return file;
}

TEST(CliMessagesTest, DtypeConvertsANpyArray) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("w.npy"), NpyOfFloats()));
  CliRun run = RunCli("convert " + ShellQuoted(dir.File("w.npy")) + " " +
                      ShellQuoted(dir.File("w.safetensors")) + " --dtype F16");
  ASSERT_EQ(run.status, 0) << run.output;
  const Result<Checkpoint> checkpoint = Checkpoint::Open(dir.File("w.safetensors"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_EQ(checkpoint->num_tensors(), 1u);
  const TensorView& tensor = checkpoint->tensors()[0];
  EXPECT_EQ(tensor.dtype, Dtype::kF16);
  const std::string data(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
  EXPECT_EQ(data, std::string("\x00\x3c\x00\x40\x00\x38", 6));  // 1, 2, 0.5 in F16
  // Reject: a dtype convert does not write, and an option for torch inputs.
  run = RunCli("convert " + ShellQuoted(dir.File("w.npy")) + " " +
               ShellQuoted(dir.File("x.safetensors")) + " --dtype U8");
  EXPECT_EQ(run.status, 2) << run.output;
  run = RunCli("convert " + ShellQuoted(dir.File("w.npy")) + " " +
               ShellQuoted(dir.File("x.safetensors")) + " --key a");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--key"), std::string::npos) << run.output;
}

TEST(CliMessagesTest, AnOptionForAnotherFormatIsAUsageErrorNamingIt) {
  TempDir dir;
  const std::string safetensors = dir.File("model.safetensors");
  ASSERT_EQ(RunCli("convert " + ShellQuoted(TorchFixture("valid/tied.zip.pt")) + " " +
                   ShellQuoted(safetensors)).status, 0);
  const std::string out = ShellQuoted(dir.File("out.safetensors"));
  for (const std::string flag : {"--key state_dict", "--drop-aliases", "--max-output-ratio 2"}) {
    for (const std::string dtype : {"", " --dtype F16"}) {
      const CliRun run = RunCli("convert " + ShellQuoted(safetensors) + " " + out + " " + flag +
                                dtype);
      EXPECT_EQ(run.status, 2) << flag << dtype << ": " << run.output;
      const std::string name = flag.substr(0, flag.find(' '));
      const size_t said = run.output.find(name + " applies to ");
      EXPECT_NE(said, std::string::npos) << run.output;
      EXPECT_NE(run.output.find("PyTorch", said), std::string::npos)
          << run.output;
    }
  }
  CliRun run = RunCli("convert " + ShellQuoted(safetensors) + " " + out + " --name x --dtype F16");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--name applies to .npy, not to safetensors"), std::string::npos)
      << run.output;
  // Accept: the same options on the format they are for.
  run = RunCli("convert " + ShellQuoted(TorchFixture("valid/training.zip.pt")) + " " + out +
               " --key state_dict --drop-aliases --max-output-ratio 2");
  EXPECT_EQ(run.status, 0) << run.output;
  run = RunCli("convert " + ShellQuoted(safetensors) + " " + out + " --dtype F16");
  EXPECT_EQ(run.status, 0) << run.output;
}

}  // namespace
}  // namespace stguard
