// SPDX-License-Identifier: Apache-2.0
// OUT that is IN: `stguard convert` refuses to write over its input (the same path, a hard
// link, a symbolic link) for every format, as a usage error before anything is written,
// and the library's converters refuse it too; safetensors to safetensors is the one
// conversion that may write in place. Every input kind converts to the same bytes with
// its options first or last, to a file or to standard output. And a safetensors model
// folder converts to another dtype, sharded or not, with its index rewritten.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "byte_source/npz_builder.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/conversion.h"
#include "stguard/formats.h"
#include "stguard/gguf_convert.h"
#include "stguard/mapped_file.h"
#include "stguard/npy_convert.h"
#include "stguard/reader.h"
#include "stguard/stguard_torch.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/writer.h"
#include "data/conversion_target.h"
#include "format/open_with_head.h"
#include "write/string_sink.h"
#include "support/convert_samples.h"
#include "support/gguf_encoder.h"
#include "support/run_cli.h"
#include "support/sharded_folder.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

std::span<const std::byte> ByteSpan(const std::string& text) {
  return std::as_bytes(std::span<const char>(text));
}

std::string Corpus(const std::string& name) { return std::string(STGUARD_CORPUS_DIR) + "/" + name; }

// NpyBytes is a .npy of four little-endian float32 values, shape (2, 2).
std::string NpyBytes() {
  return NpyFileBytes("<f4", "(2, 2)",
                      Bytes({0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40}));
}

// Input is one file of a format and the options its conversion needs.
struct Input {
  std::string file;     // the name in the test folder
  std::string content;  // its bytes
  std::string options;
};

std::vector<Input> EveryInput() {
  return {
      {"training.pt", ReadFileBytes(Corpus("torch/valid/training.zip.pt")), "--key state_dict"},
      {"model.bin", ReadFileBytes(Corpus("torch/valid/module_state_dict.legacy.pt")), ""},
      {"zip.bin", ReadFileBytes(Corpus("torch/valid/dtypes.zip.pt")), "--dtype F16"},
      {"legacy.pt", ReadFileBytes(Corpus("torch/valid/tied.legacy.pt")), "--drop-aliases"},
      {"w.npy", NpyBytes(), ""},
      {"w.npz", BuildNpz({{.key = "a", .elements = 4}}).Bytes(), ""},
      {"m.gguf", Encode(SimpleGgufModel()), ""},
      {"h.gguf", Encode(SimpleGgufModel()), "--dtype F16"},
      {"f.safetensors", MixedCheckpoint(), "--dtype BF16"},
  };
}

// OutNames makes the three ways of naming IN in `dir`: the path itself, a hard link and a
// symbolic link to it.
std::vector<std::string> OutNames(const TempDir& dir, const std::string& in) {
  const std::string hard = dir.File("hard-" + std::filesystem::path(in).filename().string());
  const std::string soft = dir.File("soft-" + std::filesystem::path(in).filename().string());
  EXPECT_EQ(::link(in.c_str(), hard.c_str()), 0);
  EXPECT_EQ(::symlink(in.c_str(), soft.c_str()), 0);
  return {in, hard, soft};
}

TEST(ConvertSameFileTest, EveryFormatButSafetensorsRefusesOutThatIsIn) {
  for (const Input& input : EveryInput()) {
    if (input.file == "f.safetensors") continue;
    TempDir dir;
    const std::string in = dir.File(input.file);
    ASSERT_TRUE(WriteFileBytes(in, input.content));
    for (const std::string& out : OutNames(dir, in)) {
      for (const bool options_first : {true, false}) {
        const std::string operands = ShellQuoted(in) + " " + ShellQuoted(out);
        const CliRun run = RunCli("convert " + (options_first ? input.options + " " + operands
                                                              : operands + " " + input.options));
        EXPECT_EQ(run.status, 2) << input.file << " -> " << out << ": " << run.output;
        EXPECT_NE(run.output.find("OUT is IN"), std::string::npos) << run.output;
        EXPECT_EQ(ReadFileBytes(in), input.content) << input.file << " -> " << out;
      }
    }
    EXPECT_EQ(dir.Entries().size(), 3u);  // IN and its two links: nothing written beside
    // The accept case: a new path converts.
    const CliRun run = RunCli("convert " + ShellQuoted(in) + " " +
                              ShellQuoted(dir.File("new.safetensors")) + " " + input.options);
    EXPECT_EQ(run.status, 0) << input.file << ": " << run.output;
    EXPECT_EQ(ReadFileBytes(in), input.content) << input.file;
  }
}

TEST(ConvertSameFileTest, SafetensorsConvertsInPlaceByPathHardLinkAndSymlink) {
  for (int way = 0; way < 3; ++way) {
    TempDir dir;
    const std::string in = dir.File("f.safetensors");
    ASSERT_TRUE(WriteFileBytes(in, MixedCheckpoint()));
    const std::string out = OutNames(dir, in)[way];
    const CliRun run =
        RunCli("convert --dtype BF16 " + ShellQuoted(in) + " " + ShellQuoted(out));
    ASSERT_EQ(run.status, 0) << run.output;
    const Result<Checkpoint> written = Checkpoint::Open(out);
    ASSERT_TRUE(written.ok()) << written.error().ToString();
    EXPECT_EQ(written->Find("f32")->dtype, Dtype::kBF16);
  }
}

TEST(ConvertSameFileTest, LibraryConvertersRefuseOutThatIsIn) {
  TempDir dir;
  const std::string npy = dir.File("w.npy");
  const std::string npz = dir.File("w.npz");
  const std::string gguf = dir.File("m.gguf");
  const std::string pt = dir.File("t.pt");
  const std::string npz_bytes = BuildNpz({{.key = "a", .elements = 4}}).Bytes();
  const std::string gguf_bytes = Encode(SimpleGgufModel());
  const std::string pt_bytes = ReadFileBytes(Corpus("torch/valid/module_state_dict.zip.pt"));
  ASSERT_TRUE(WriteFileBytes(npy, NpyBytes()));
  ASSERT_TRUE(WriteFileBytes(npz, npz_bytes));
  ASSERT_TRUE(WriteFileBytes(gguf, gguf_bytes));
  ASSERT_TRUE(WriteFileBytes(pt, pt_bytes));
  const std::string link = dir.File("link");
  ASSERT_EQ(::symlink(pt.c_str(), link.c_str()), 0);

  EXPECT_EQ(NpyArrayToSafetensors(npy, npy, "w", std::nullopt).code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(NpzToSafetensors(npz, npz, std::nullopt, nullptr).code, ErrorCode::kInvalidArgument);
  GgufConvertReport report;
  EXPECT_EQ(ConvertGguf(gguf, gguf, {}, &report).code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ConvertTorchFile(pt, link, {}, {}, nullptr).code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReadFileBytes(npy), NpyBytes());
  EXPECT_EQ(ReadFileBytes(npz), npz_bytes);
  EXPECT_EQ(ReadFileBytes(gguf), gguf_bytes);
  EXPECT_EQ(ReadFileBytes(pt), pt_bytes);
  // The rule itself: a missing OUT or another file is not IN; a folder reached two ways is.
  EXPECT_TRUE(CheckOutputIsNotInput(pt, dir.File("missing")).ok());
  EXPECT_TRUE(CheckOutputIsNotInput(pt, npy).ok());
  EXPECT_TRUE(CheckOutputIsNotInput(dir.File("missing"), pt).ok());
  EXPECT_EQ(CheckOutputIsNotInput(dir.path(), dir.path() + "/.").code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(ConvertTorchFile(pt, dir.File("t.safetensors"), {}, {}, nullptr).ok());
  // The one entry every front end calls, and the C API's: a usage error for every format.
  for (const std::string& in : {npy, npz, gguf, pt}) {
    const std::string before = ReadFileBytes(in);
    ConvertReport refused;
    const Error same = ConvertPath(in, in, {}, &refused);
    EXPECT_EQ(same.code, ErrorCode::kInvalidArgument) << in;
    EXPECT_TRUE(refused.usage) << in;
    stguard_error err{};
    EXPECT_EQ(stguard_convert(in.c_str(), in.c_str(), STGUARD_NUM_DTYPES, nullptr, &err),
              STGUARD_INVALID_ARGUMENT)
        << in;
    EXPECT_EQ(ReadFileBytes(in), before) << in;
  }
  ConvertReport converted;
  EXPECT_TRUE(ConvertPath(pt, link + ".safetensors", {}, &converted).ok());
  stguard_error err{};
  EXPECT_EQ(stguard_convert(gguf.c_str(), dir.File("c.safetensors").c_str(), STGUARD_DTYPE_F16,
                            nullptr, &err),
            STGUARD_OK);
}

// `converted` counts the tensors whose dtype changed, for every format: for GGUF a
// dequantized tensor is a change, a plain one only when --dtype rewrites it.
TEST(ConvertPathTest, ConvertedCountsDtypeChangesForEveryFormat) {
  TempDir dir;
  const std::string gguf = dir.File("m.gguf");
  ASSERT_TRUE(WriteFileBytes(gguf, Encode(SimpleGgufModel())));  // one F32, one Q8_0
  ConvertReport report;
  ASSERT_TRUE(ConvertPath(gguf, dir.File("a.safetensors"), {}, &report).ok());
  EXPECT_EQ(report.num_tensors, 2u);
  EXPECT_EQ(report.num_converted, 1u);
  ConvertOptions half;
  half.dtype = Dtype::kF16;
  ASSERT_TRUE(ConvertPath(gguf, dir.File("b.safetensors"), half, &report).ok());
  EXPECT_EQ(report.num_converted, 2u);
  const std::string st = dir.File("f.safetensors");
  ASSERT_TRUE(WriteFileBytes(st, MixedCheckpoint()));
  ASSERT_TRUE(ConvertPath(st, dir.File("c.safetensors"), half, &report).ok());
  const Result<Checkpoint> mixed = Checkpoint::Open(st);
  ASSERT_TRUE(mixed.ok());
  size_t changes = 0;
  for (const TensorView& tensor : mixed->tensors()) {
    changes += ChangesDtype(tensor.dtype, Dtype::kF16) ? 1 : 0;
  }
  EXPECT_EQ(report.num_converted, changes);
  EXPECT_GT(changes, 0u);
  // OUT "-" needs a stream to write to; given one, it holds the file's bytes.
  EXPECT_EQ(ConvertPath(gguf, "-", {}, &report).code, ErrorCode::kInvalidArgument);
  std::string streamed;
  StringSink sink(&streamed);
  ConvertOptions to_stream;
  to_stream.stdout_sink = &sink;
  ASSERT_TRUE(ConvertPath(gguf, "-", to_stream, &report).ok());
  EXPECT_EQ(streamed, ReadFileBytes(dir.File("a.safetensors")));
  EXPECT_EQ(dir.Entries().size(), 5u);  // nothing left behind by the temporary file
}

// The report names what IN was found to be for every outcome, a usage error's too: the
// envelope's "format" is read there, IN is not sniffed again.
TEST(ConvertPathTest, ReportNamesTheInputFormatForEveryOutcome) {
  TempDir dir;
  const std::string st = dir.File("f.safetensors");
  ASSERT_TRUE(WriteFileBytes(st, MixedCheckpoint()));
  ConvertReport report;
  ConvertOptions integer;
  integer.dtype = Dtype::kI8;  // no conversion target: a usage error
  EXPECT_EQ(ConvertPath(st, dir.File("a.safetensors"), integer, &report).code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(report.usage);
  EXPECT_EQ(report.input.format, Format::kSafetensors);
  EXPECT_FALSE(report.input.is_folder);
  ConvertOptions half;
  half.dtype = Dtype::kF16;
  ASSERT_TRUE(ConvertPath(st, dir.File("b.safetensors"), half, &report).ok());
  EXPECT_EQ(report.input.format, Format::kSafetensors);
  const std::string npy = dir.File("w.npy");
  ASSERT_TRUE(WriteFileBytes(npy, NpyBytes()));
  ASSERT_TRUE(ConvertPath(npy, dir.File("c.safetensors"), {}, &report).ok());
  EXPECT_EQ(report.input.format, Format::kNpy);
  EXPECT_FALSE(ConvertPath(dir.File("missing"), dir.File("d.safetensors"), {}, &report).ok());
  EXPECT_EQ(report.input.format, Format::kUnknown);
  ASSERT_FALSE(ConvertPath(dir.path(), dir.File("out"), {}, &report).ok());
  EXPECT_TRUE(report.input.is_folder);
}

// A safetensors file opened from the file and head the sniff read is the file Open reads:
// the head serves the first bytes (a head that differs from the file shows it was used), a
// head longer than the file is not this file's and is ignored, and the data is read from
// the handed file, unmapped (empty spans, ReadData by pread).
TEST(ConvertPathTest, CheckpointOpensFromTheSniffedHead) {
  TempDir dir;
  const std::string path = dir.File("f.safetensors");
  const std::string bytes = MixedCheckpoint();
  ASSERT_TRUE(WriteFileBytes(path, bytes));
  const Result<Checkpoint> opened = Checkpoint::Open(path);
  ASSERT_TRUE(opened.ok());
  const auto unmapped = [&] {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    EXPECT_TRUE(file.ok());
    return std::move(*file);
  };
  const std::span<const std::byte> head = ByteSpan(bytes).first(20);
  const Result<Checkpoint> from_head = OpenCheckpointWithHead(unmapped(), head);
  ASSERT_TRUE(from_head.ok());
  EXPECT_EQ(from_head->header_text(), opened->header_text());
  ASSERT_EQ(from_head->num_tensors(), opened->num_tensors());
  const TensorView& last = from_head->tensors().back();
  ASSERT_GT(last.byte_size(), 0u);
  EXPECT_TRUE(last.data.empty());
  std::vector<std::byte> data(static_cast<size_t>(last.byte_size()));
  ASSERT_TRUE(from_head->ReadData(8 + from_head->header_len() + last.begin, data).ok());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), opened->tensors().back().data.begin()));
  std::string forged = bytes.substr(0, 20);
  forged[8] = '[';  // the header's '{' as the head says it: refused, so the head was read
  EXPECT_FALSE(OpenCheckpointWithHead(unmapped(), ByteSpan(forged)).ok());
  const std::string longer = bytes + "extra";
  const Result<Checkpoint> ignored = OpenCheckpointWithHead(unmapped(), ByteSpan(longer));
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ(ignored->header_text(), opened->header_text());
}

TEST(ConvertEveryInputTest, OptionsFirstOrLastAndFileOrStdoutGiveTheSameBytes) {
  // The temporary file a seeking writer builds for OUT - goes under TMPDIR: nothing stays.
  TempDir tmpdir;
  for (const Input& input : EveryInput()) {
    TempDir dir;
    const std::string in = dir.File(input.file);
    ASSERT_TRUE(WriteFileBytes(in, input.content));
    std::vector<std::string> outputs;
    for (const bool options_first : {true, false}) {
      for (const bool to_stdout : {false, true}) {
        const std::string out = to_stdout ? "-" : ShellQuoted(dir.File("out.safetensors"));
        const std::string operands = ShellQuoted(in) + " " + out;
        const std::string arguments =
            "convert " + (options_first ? input.options + " " + operands
                                        : operands + " " + input.options);
        const char* saved = std::getenv("TMPDIR");
        const std::string old_tmpdir = saved != nullptr ? saved : "";
        ASSERT_EQ(::setenv("TMPDIR", tmpdir.path().c_str(), 1), 0);
        const CliRun run = RunCli(arguments, Streams::kStdoutOnly);
        if (saved != nullptr) {
          ::setenv("TMPDIR", old_tmpdir.c_str(), 1);
        } else {
          ::unsetenv("TMPDIR");
        }
        ASSERT_EQ(run.status, 0) << arguments;
        outputs.push_back(to_stdout ? run.output : ReadFileBytes(dir.File("out.safetensors")));
        std::remove(dir.File("out.safetensors").c_str());
      }
    }
    EXPECT_TRUE(tmpdir.Entries().empty()) << input.file;
    ASSERT_TRUE(Checkpoint::FromBytes(std::string_view(outputs[0])).ok()) << input.file;
    for (const std::string& output : outputs) EXPECT_EQ(output, outputs[0]) << input.file;
  }
}

// FilesOf maps each file name in the folder `path` to its bytes.
std::map<std::string, std::string> FilesOf(const std::string& path) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    files[entry.path().filename().string()] = ReadFileBytes(entry.path().string());
  }
  return files;
}

TEST(ConvertEveryInputTest, FoldersGiveTheSameFilesWithOptionsFirstOrLastAndRefuseStdout) {
  TempDir st_folder;
  WriteShardedFolder(st_folder, 3);
  const std::vector<std::pair<std::string, std::string>> folders = {
      {st_folder.path(), "--dtype BF16"},
      {Corpus("torch/valid/sharded"), "--drop-aliases --dtype F16"}};
  for (const auto& [in, options] : folders) {
    TempDir out;
    std::vector<std::map<std::string, std::string>> outputs;
    for (const bool options_first : {true, false}) {
      const std::string target = out.File(options_first ? "first" : "last");
      const std::string operands = ShellQuoted(in) + " " + ShellQuoted(target);
      const CliRun run = RunCli("convert " + (options_first ? options + " " + operands
                                                             : operands + " " + options));
      ASSERT_EQ(run.status, 0) << in << ": " << run.output;
      outputs.push_back(FilesOf(target));
    }
    EXPECT_GE(outputs[0].size(), 2u) << in;
    EXPECT_EQ(outputs[0], outputs[1]) << in;
    // A folder converts to a folder: standard output is refused, nothing written.
    const CliRun run = RunCli("convert " + ShellQuoted(in) + " - " + options);
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("OUT cannot be -"), std::string::npos) << run.output;
    EXPECT_EQ(out.Entries().size(), 2u);
  }
}

TEST(ConvertSameFileTest, FoldersRefuseOutThatIsInByPathAndSymlink) {
  TempDir parent;
  const std::string in = parent.File("torch");
  std::filesystem::copy(Corpus("torch/valid/sharded"), in);
  const std::map<std::string, std::string> before = FilesOf(in);
  const std::string link = parent.File("link");
  ASSERT_EQ(::symlink(in.c_str(), link.c_str()), 0);
  for (const std::string& out : {in, link, in + "/."}) {
    const CliRun run = RunCli("convert " + ShellQuoted(in) + " " + ShellQuoted(out));
    EXPECT_EQ(run.status, 2) << out << ": " << run.output;
    EXPECT_NE(run.output.find("OUT is IN"), std::string::npos) << run.output;
    EXPECT_EQ(FilesOf(in), before) << out;
  }
  EXPECT_EQ(RunCli("convert " + ShellQuoted(in) + " " + ShellQuoted(parent.File("new"))).status,
            0);
  EXPECT_EQ(FilesOf(in), before);
}

// TensorsOf maps each tensor of the folder or file at `path` to its dtype.
std::map<std::string, Dtype> TensorsOf(const std::string& path) {
  std::map<std::string, Dtype> out;
  Result<CheckpointDir> dir = CheckpointDir::Open(path);
  EXPECT_TRUE(dir.ok()) << dir.error().ToString();
  if (!dir.ok()) return out;
  for (const ShardFile& shard : dir->shards()) {
    for (const TensorView& tensor : shard.checkpoint.tensors()) {
      out[std::string(tensor.name)] = tensor.dtype;
    }
  }
  return out;
}

TEST(ConvertSafetensorsFolderTest, ShardedFolderConvertsWithItsIndexRewritten) {
  TempDir in;
  const ShardedFolder written = WriteShardedFolder(in, 3);
  TempDir out_parent;
  const std::string out = out_parent.File("bf16");
  const CliRun run =
      RunCli("convert " + ShellQuoted(in.path()) + " " + ShellQuoted(out) + " --dtype BF16");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("in 4 files"), std::string::npos) << run.output;
  const std::map<std::string, Dtype> before = TensorsOf(in.path());
  const std::map<std::string, Dtype> after = TensorsOf(out);
  ASSERT_EQ(after.size(), written.entries.size());
  for (const auto& [name, dtype] : before) {
    const bool floating = IsConvertibleFloat(dtype);
    EXPECT_EQ(after.at(name), floating ? Dtype::kBF16 : dtype) << name;
  }
  Result<CheckpointDir> dir = CheckpointDir::Open(out);
  ASSERT_TRUE(dir.ok()) << dir.error().ToString();
  EXPECT_TRUE(dir->has_index());
  EXPECT_EQ(dir->index_total_size(), dir->total_bytes());  // no total-size warning
  EXPECT_TRUE(dir->warnings().empty());
  EXPECT_EQ(Checkpoint::Open(out + "/" + ShardName(2, 3)).ok(), true);
}

TEST(ConvertSafetensorsFolderTest, SingleFileFolderConvertsAndMisuseIsRefused) {
  TempDir in;
  ASSERT_TRUE(WriteFileBytes(in.File("model.safetensors"), MixedCheckpoint()));
  ASSERT_TRUE(WriteFileBytes(in.File("config.json"), "{}"));
  TempDir out_parent;
  const std::string out = out_parent.File("f16");
  // No --dtype, --key for PyTorch, OUT that is IN: usage errors, nothing written.
  EXPECT_EQ(RunCli("convert " + ShellQuoted(in.path()) + " " + ShellQuoted(out)).status, 2);
  EXPECT_EQ(RunCli("convert " + ShellQuoted(in.path()) + " " + ShellQuoted(out) +
                   " --dtype F16 --key state_dict")
                .status,
            2);
  const CliRun same = RunCli("convert " + ShellQuoted(in.path()) + " " +
                             ShellQuoted(in.path()) + " --dtype F16");
  EXPECT_EQ(same.status, 2) << same.output;
  EXPECT_NE(same.output.find("OUT is IN"), std::string::npos) << same.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(ReadFileBytes(in.File("model.safetensors")), MixedCheckpoint());

  const CliRun run =
      RunCli("convert " + ShellQuoted(in.path()) + " " + ShellQuoted(out) + " --dtype F16");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(out_parent.Entries(), std::vector<std::string>{"f16"});
  const Result<Checkpoint> converted = Checkpoint::Open(out + "/model.safetensors");
  ASSERT_TRUE(converted.ok()) << converted.error().ToString();
  EXPECT_EQ(converted->Find("f32")->dtype, Dtype::kF16);
  EXPECT_EQ(converted->Find("i32")->dtype, Dtype::kI32);
  EXPECT_FALSE(std::filesystem::exists(out + "/config.json"));

  // The library call: the same bytes as converting the file alone.
  SafetensorsFolderReport report;
  ASSERT_TRUE(ConvertSafetensorsFolder(in.path(), out_parent.File("lib"), Dtype::kF16, {}, {},
                                       &report)
                  .ok());
  EXPECT_EQ(report.written, std::vector<std::string>{"model.safetensors"});
  const std::string alone = out_parent.File("alone.safetensors");
  ASSERT_EQ(RunCli("convert " + ShellQuoted(in.File("model.safetensors")) + " " +
                   ShellQuoted(alone) + " --dtype F16")
                .status,
            0);
  EXPECT_EQ(ReadFileBytes(out_parent.File("lib/model.safetensors")), ReadFileBytes(alone));
  EXPECT_EQ(ConvertSafetensorsFolder(in.path(), out_parent.File("x"), Dtype::kI8, {}, {},
                                     &report)
                .code,
            ErrorCode::kInvalidArgument);
}

TEST(ConvertSafetensorsFolderTest, AFolderOfNeitherKindSaysSo) {
  TempDir in;
  ASSERT_TRUE(WriteFileBytes(in.File("config.json"), "{}"));
  TempDir out_parent;
  for (const std::string& dtype : {std::string(), std::string(" --dtype F16")}) {
    const CliRun run = RunCli("convert " + ShellQuoted(in.path()) + " " +
                              ShellQuoted(out_parent.File("out")) + dtype);
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("NoSafetensorsInFolder"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("nor pytorch_model.bin"), std::string::npos) << run.output;
  }
  EXPECT_TRUE(out_parent.Entries().empty());
}

}  // namespace
}  // namespace stguard::testing
